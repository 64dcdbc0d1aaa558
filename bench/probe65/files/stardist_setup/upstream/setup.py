from __future__ import absolute_import, print_function

import os
import sys
from os import path
from glob import glob

from setuptools import setup, find_packages, Extension
import numpy as np

try:
    import torch
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME
except ImportError:
    print("PyTorch is required to build stardist_torch (pip install torch)")
    raise

_dir = path.dirname(__file__)

with open(path.join(_dir, "stardist_torch", "version.py"), encoding="utf-8") as f:
    exec(f.read())

with open(path.join(_dir, "README.md"), encoding="utf-8") as f:
    long_description = f.read()


external_root = path.join(_dir, "stardist_torch", "lib", "external")
qhull_root = path.join(external_root, "qhull_src", "src")
nanoflann_root = path.join(external_root, "nanoflann")
clipper_root = path.join(external_root, "clipper")
qhull_src = sorted(glob(path.join(qhull_root, "*", "*.c*")))[::-1]


def openmp_flags():
    if sys.platform == "darwin":
        return ["-Xpreprocessor", "-fopenmp"], ["-lomp"]
    if sys.platform == "win32":
        return ["/openmp"], []
    return ["-fopenmp"], ["-fopenmp"]


omp_compile, omp_link = openmp_flags()

# --------------------------------------------------------------------------------------------
# CPU library (always built): polygon / polyhedron NMS, star-convex distances
# --------------------------------------------------------------------------------------------
cpu_ext = Extension(
    "stardist_torch.lib._stardist_cpu",
    sources=["stardist_torch/lib/stardist2d.cpp", "stardist_torch/lib/stardist3d.cpp",
             "stardist_torch/lib/stardist3d_impl.cpp", "stardist_torch/lib/utils.cpp",
             path.join(clipper_root, "clipper.cpp")] + qhull_src,
    include_dirs=[np.get_include(), qhull_root, nanoflann_root, clipper_root],
    extra_compile_args=["-std=c++14", "-O3"] + omp_compile,
    extra_link_args=omp_link,
)

# --------------------------------------------------------------------------------------------
# CUDA library: block-wise overlap kernels for large candidate sets
# --------------------------------------------------------------------------------------------
if CUDA_HOME is None:
    raise RuntimeError("CUDA_HOME not found: stardist_torch needs the CUDA toolkit (nvcc) to build _nms_cuda")

cuda_arch = os.environ.get("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6;8.9;9.0")
os.environ["TORCH_CUDA_ARCH_LIST"] = cuda_arch

nvcc_flags = [
    "-O3",
    "--use_fast_math",
    "-lineinfo",
    "--expt-relaxed-constexpr",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
]

cuda_ext = CUDAExtension(
    name="stardist_torch._nms_cuda",
    sources=[
        "stardist_torch/csrc/nms_binding.cpp",
        "stardist_torch/csrc/polygon_overlap_kernel.cu",
        "stardist_torch/csrc/polyhedron_overlap_kernel.cu",
    ],
    include_dirs=[path.join(_dir, "stardist_torch", "csrc")],
    extra_compile_args={"cxx": ["-O3", "-std=c++17"], "nvcc": nvcc_flags},
)


setup(
    name="stardist-torch",
    version=__version__,
    description="StarDist - Object Detection with Star-convex Shapes (PyTorch port)",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/example/stardist-torch",
    author="stardist-torch contributors",
    license="BSD-3-Clause",
    packages=find_packages(),
    python_requires=">=3.8",
    cmdclass={"build_ext": BuildExtension},
    ext_modules=[cpu_ext, cuda_ext],
    package_data={"stardist_torch": ["models/*/*/*.json", "models/*/*/*.pth"]},
    install_requires=[
        "csbdeep>=0.8.0",
        "scikit-image",
        "numba",
        "imageio",
        "torch>=2.0",
        "tifffile",
    ],
    extras_require={
        "napari": ["napari>=0.4.19", "magicgui"],
        "gpu-tools": ["cupy-cuda12x>=13.0", "pynvml"],
        "test": ["pytest", "tifffile"],
    },
    entry_points={
        "console_scripts": [
            "stardist-predict2d = stardist_torch.scripts.predict2d:main",
            "stardist-predict3d = stardist_torch.scripts.predict3d:main",
        ],
        "napari.manifest": ["stardist-torch = stardist_torch:napari.yaml"],
    },
    classifiers=[
        "Development Status :: 4 - Beta",
        "Intended Audience :: Science/Research",
        "Topic :: Scientific/Engineering :: Image Recognition",
        "License :: OSI Approved :: BSD License",
        "Programming Language :: Python :: 3",
    ],
)
