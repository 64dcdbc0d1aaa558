#!/usr/bin/env python
"""Build script for alphaflow: fast cross-sectional / time-series operators for alpha research.

The C++ extension `alphaflow._C` always contains the CPU kernels; the CUDA kernels
(cs_rank, cs_neutralize, group_demean) are added when a CUDA toolkit is found or
FORCE_CUDA=1 is set (e.g. when building wheels on a machine without a GPU).

    pip install -e .                      # auto-detect
    FORCE_CUDA=1 TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0" pip install -e .
"""
import glob
import os

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

ROOT = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join("alphaflow", "csrc")


def get_version():
    with open(os.path.join(ROOT, "alphaflow", "version.py")) as f:
        ns = {}
        exec(f.read(), ns)
    return ns["__version__"]


def get_extensions():
    sources = sorted(glob.glob(os.path.join(CSRC, "*.cpp"))) + sorted(glob.glob(os.path.join(CSRC, "cpu", "*.cpp")))
    cuda_sources = sorted(glob.glob(os.path.join(CSRC, "cuda", "*.cu")))

    define_macros = []
    extra_compile_args = {"cxx": ["-O3", "-std=c++17", "-fopenmp"]}
    extra_link_args = ["-fopenmp"]

    force_cuda = os.getenv("FORCE_CUDA", "0") == "1"
    if (torch.cuda.is_available() and CUDA_HOME is not None) or force_cuda:
        extension = CUDAExtension
        sources += cuda_sources
        define_macros += [("WITH_CUDA", None)]
        extra_compile_args["nvcc"] = [
            "-O3",
            "--use_fast_math",
            "-lineinfo",
            "--expt-relaxed-constexpr",
            "-std=c++17",
        ]
        print(f"alphaflow: building CUDA kernels with {CUDA_HOME}")
    else:
        extension = CppExtension
        print("alphaflow: CUDA not found, building CPU kernels only")

    return [
        extension(
            "alphaflow._C",
            sources,
            include_dirs=[os.path.join(ROOT, CSRC)],
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
        )
    ]


with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="alphaflow",
    version=get_version(),
    description="GPU-accelerated alpha factor operators and IC analytics",
    long_description=long_description,
    long_description_content_type="text/markdown",
    author="alphaflow contributors",
    license="Apache-2.0",
    python_requires=">=3.8",
    packages=find_packages(exclude=("tests", "benchmarks", "examples")),
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)},
    install_requires=[
        "torch>=2.0",
        "numpy>=1.22",
        "pandas>=1.5",
        "pyarrow>=12",
        "scipy>=1.9",
    ],
    extras_require={
        "gpu": ["cupy-cuda12x>=12.0", "triton>=2.1"],
        "qlib": ["pyqlib>=0.9.3"],
        "dev": ["pytest", "pytest-benchmark", "black", "ruff"],
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Programming Language :: C++",
        "Environment :: GPU :: NVIDIA CUDA :: 12",
        "Topic :: Office/Business :: Financial :: Investment",
    ],
    zip_safe=False,
)
