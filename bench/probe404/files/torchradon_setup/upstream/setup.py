import os
import sys
from setuptools import setup, find_packages
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

from make import build

# The CUDA kernels (forward/back projection, texture cache, FFT helpers) are compiled
# by make.py with nvcc into objs/libradon.a; the extension only adds the pybind layer.
cuda_home = os.getenv("CUDA_HOME", "/usr/local/cuda")
print(f"Using CUDA_HOME={cuda_home}")
build(cuda_home=cuda_home, verbose="--verbose" in sys.argv)

with open("README.md", "r") as fh:
    long_description = fh.read()

setup(name='torch_radon',
      version="1.0.0",
      author="Matteo Ronchetti",
      author_email="mttronchetti@gmail.com",
      description="Radon transform in PyTorch",
      long_description=long_description,
      long_description_content_type="text/markdown",
      url="https://github.com/matteo-ronchetti/torch-radon",
      packages=find_packages(exclude=("tests", "examples")),
      package_dir={
          'torch_radon': './torch_radon',
      },
      ext_modules=[
          CUDAExtension('torch_radon_cuda', [os.path.abspath('src/pytorch.cpp')],
                        include_dirs=[os.path.abspath('include')],
                        library_dirs=[os.path.abspath("objs")],
                        libraries=["radon", "cufft"],
                        extra_compile_args=["-static", "-static-libgcc", "-static-libstdc++"],
                        ),
      ],
      cmdclass={'build_ext': BuildExtension},
      install_requires=[
          "scipy",
          "alpha-transform"
      ],
      classifiers=[
          "Programming Language :: Python :: 3",
          "License :: OSI Approved :: GNU General Public License v3 (GPLv3)",
          "Operating System :: POSIX :: Linux",
          "Environment :: GPU :: NVIDIA CUDA",
      ],
      )
