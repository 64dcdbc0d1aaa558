#!/usr/bin/env python
"""Build script for stardist-torch.

The polygon / polyhedron non-maximum suppression and the star-convex polygon
rasterisation are implemented as CUDA kernels (csrc/cuda) with a CPU fallback
written in C++ (csrc/cpu). Both are compiled into ``stardist_torch._C``.

    pip install -e .                      # builds with nvcc if CUDA_HOME is set
    TORCH_CUDA_ARCH_LIST="7.0;8.0;8.6" pip install -e .
"""
import glob
import os

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

this_dir = os.path.dirname(os.path.abspath(__file__))

requirements = [
    "torch>=1.12",
    "numpy",
    "scipy",
    "scikit-image",
    "tifffile",
    "csbdeep>=0.7.4",
    "numba",
    "tqdm",
]


def get_extensions():
    extensions_dir = os.path.join(this_dir, "stardist_torch", "csrc")

    main_file = glob.glob(os.path.join(extensions_dir, "*.cpp"))
    source_cpu = glob.glob(os.path.join(extensions_dir, "cpu", "*.cpp"))
    source_cuda = glob.glob(os.path.join(extensions_dir, "cuda", "*.cu"))

    sources = main_file + source_cpu
    extension = CppExtension

    extra_compile_args = {"cxx": ["-O3", "-std=c++17"]}
    define_macros = []

    if CUDA_HOME is None:
        raise RuntimeError(
            "CUDA_HOME is not set. stardist-torch needs the CUDA toolkit (nvcc) to build "
            "its GPU kernels. Install cudatoolkit-dev or point CUDA_HOME at /usr/local/cuda."
        )

    extension = CUDAExtension
    sources += source_cuda
    define_macros += [("WITH_CUDA", None)]
    extra_compile_args["nvcc"] = [
        "-O3",
        "--use_fast_math",
        "-DCUDA_HAS_FP16=1",
        "-D__CUDA_NO_HALF_OPERATORS__",
        "-D__CUDA_NO_HALF_CONVERSIONS__",
        "-D__CUDA_NO_HALF2_OPERATORS__",
        "-gencode=arch=compute_70,code=sm_70",
        "-gencode=arch=compute_80,code=sm_80",
        "-gencode=arch=compute_86,code=sm_86",
    ]

    sources = [os.path.join(extensions_dir, s) for s in sources]
    include_dirs = [extensions_dir]

    ext_modules = [
        extension(
            "stardist_torch._C",
            sources,
            include_dirs=include_dirs,
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
        )
    ]
    return ext_modules


setup(
    name="stardist-torch",
    version="0.3.1",
    author="stardist-torch contributors",
    description="PyTorch port of StarDist (star-convex object detection for microscopy)",
    long_description=open(os.path.join(this_dir, "README.md")).read() if os.path.exists(os.path.join(this_dir, "README.md")) else "",
    long_description_content_type="text/markdown",
    packages=find_packages(exclude=("tests", "examples")),
    python_requires=">=3.8",
    install_requires=requirements,
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension},
    extras_require={
        "napari": ["napari>=0.4.18", "magicgui"],
        "dev": ["pytest", "black"],
    },
)
