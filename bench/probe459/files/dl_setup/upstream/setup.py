import os

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

here = os.path.abspath(os.path.dirname(__file__))
with open(os.path.join(here, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

CUDA_SOURCES = [
    "difflogic/cuda/difflogic.cpp",
    "difflogic/cuda/difflogic_kernel.cu",
]

setup(
    name="difflogic",
    version="0.1.0",
    author="Felix Petersen",
    description="Differentiable Logic Gate Networks (+ logic cellular automata experiments)",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/Felix-Petersen/difflogic",
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: MIT License",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
    ],
    package_dir={"difflogic": "difflogic", "dlca": "dlca"},
    packages=["difflogic", "dlca"],
    ext_modules=[CUDAExtension("difflogic_cuda", CUDA_SOURCES, extra_compile_args={"nvcc": ["-lineinfo"]})],
    cmdclass={"build_ext": BuildExtension},
    python_requires=">=3.6",
    install_requires=[
        "torch>=1.6.0",
        "numpy",
    ],
)
