# coding=utf-8
# SPDX-License-Identifier: BSD-3-Clause
#
# Build script for torch-harmonics: differentiable spherical harmonic transforms and
# discrete-continuous (DISCO) convolutions on the sphere, used by SFNO weather models.

import os
import re
import sys
import warnings
from pathlib import Path

from setuptools import find_packages, setup

try:
    import torch
    from torch.utils import cpp_extension
    from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME
    _torch_available = True
except (ImportError, OSError):
    _torch_available = False
    warnings.warn("torch not found at build time, only the pure-python package will be installed")

HERE = Path(__file__).parent


def version(root_path):
    """Returns the version taken from __init__.py"""
    version_path = root_path.joinpath("torch_harmonics", "__init__.py")
    with version_path.open() as f:
        version_file = f.read()
    version_match = re.search(r"^__version__ = ['\"]([^'\"]*)['\"]", version_file, re.M)
    if version_match:
        return version_match.group(1)
    raise RuntimeError("Unable to find version string.")


def readme(root_path):
    with root_path.joinpath("README.md").open(encoding="UTF-8") as f:
        return f.read()


def get_compile_args(module_name):
    """If user runs build with TORCH_HARMONICS_DEBUG=1 set, it will use debugging flags to build"""
    debug_mode = os.environ.get("TORCH_HARMONICS_DEBUG", "0") == "1"
    profile_mode = os.environ.get("TORCH_HARMONICS_PROFILE", "0") == "1"

    nvcc_extra_flags = []
    if profile_mode:
        nvcc_extra_flags.append("-lineinfo")

    if debug_mode:
        print(f"WARNING: Compiling {module_name} with debugging flags")
        return {
            "cxx": ["-g", "-O0", "-Wall"],
            "nvcc": ["-g", "-G", "-O0"] + nvcc_extra_flags,
        }
    else:
        print(f"NOTE: Compiling {module_name} with release flags")
        return {
            "cxx": ["-O3", "-DNDEBUG"],
            "nvcc": ["-O3", "-DNDEBUG", "--use_fast_math"] + nvcc_extra_flags,
        }


def get_ext_modules():
    """Build the optional DISCO / attention kernels if a CUDA toolchain is around."""
    ext_modules = []
    if not _torch_available:
        return ext_modules

    # set FORCE_CUDA_EXTENSION=1 to build the kernels on a login node without GPUs
    force_cuda = os.environ.get("FORCE_CUDA_EXTENSION", "0") == "1"
    build_cuda = (torch.cuda.is_available() and CUDA_HOME is not None) or force_cuda

    # the CPU helpers are always built
    print("Compiling helper routines for torch-harmonics.")
    ext_modules.append(
        CppExtension(
            "disco_helpers",
            ["torch_harmonics/csrc/disco/disco_helpers.cpp"],
            extra_compile_args=get_compile_args("disco_helpers"),
        )
    )

    if build_cuda:
        print("Compiling custom CUDA kernels for torch-harmonics.")
        os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;8.0;8.6;9.0+PTX")
        ext_modules.append(
            CUDAExtension(
                "disco_cuda_extension",
                [
                    "torch_harmonics/csrc/disco/disco_interface.cu",
                    "torch_harmonics/csrc/disco/disco_cuda_fwd.cu",
                    "torch_harmonics/csrc/disco/disco_cuda_bwd.cu",
                ],
                extra_compile_args=get_compile_args("disco_cuda_extension"),
            )
        )
        ext_modules.append(
            CUDAExtension(
                "attention_cuda_extension",
                [
                    "torch_harmonics/csrc/attention/attention_interface.cu",
                    "torch_harmonics/csrc/attention/attention_fwd.cu",
                    "torch_harmonics/csrc/attention/attention_bwd.cu",
                ],
                extra_compile_args=get_compile_args("attention_cuda_extension"),
            )
        )
    else:
        print("No CUDA toolchain found, installing the pure-torch fallbacks only.")

    return ext_modules


root_path = HERE

install_requires = [
    "torch>=2.0",
    "numpy>=1.22",
    "triton>=2.1; platform_system=='Linux'",
]

setup(
    name="torch_harmonics",
    version=version(root_path),
    author="Boris Bonev",
    description="Differentiable signal processing on the sphere for PyTorch.",
    long_description=readme(root_path),
    long_description_content_type="text/markdown",
    url="https://github.com/NVIDIA/torch-harmonics",
    packages=find_packages(include=["torch_harmonics", "torch_harmonics.*"]),
    python_requires=">=3.9",
    install_requires=install_requires,
    extras_require={
        "dev": ["pytest>=6.0.0", "black>=22.10.0", "coverage>=6.5.0"],
        "2d3ds": ["requests", "tarfile", "tqdm", "PIL", "h5py"],
    },
    ext_modules=get_ext_modules(),
    cmdclass={"build_ext": BuildExtension.with_options(use_ninja=True)} if _torch_available else {},
    license="Modified BSD",
    classifiers=[
        "Development Status :: 4 - Beta",
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: BSD License",
        "Operating System :: POSIX :: Linux",
        "Environment :: GPU :: NVIDIA CUDA",
    ],
)
