# coding=utf-8
# SPDX-FileCopyrightText: Copyright (c) 2024 The torch-harmonics Authors. All rights reserved.
# SPDX-License-Identifier: BSD-3-Clause
#
# Build script for torch-harmonics. The DISCO convolution CUDA kernels are optional: they are
# compiled when a CUDA toolchain is found (or FORCE_CUDA_EXTENSION=1 is set, e.g. in a
# docker build without a visible GPU); otherwise the pure-PyTorch implementation is used.

import os
import re
import sys
import glob
import warnings
from pathlib import Path

from setuptools import find_packages, setup

try:
    import torch
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

    BUILD_CPP = True
except (ImportError, TypeError, AssertionError, AttributeError) as e:
    warnings.warn(f"building custom extensions skipped: {e}")
    BUILD_CPP = False

HERE = Path(__file__).parent


def get_version():
    text = (HERE / "torch_harmonics" / "__init__.py").read_text()
    match = re.search(r'^__version__\s*=\s*[\'"]([^\'"]*)[\'"]', text, re.M)
    if not match:
        raise RuntimeError("unable to find __version__")
    return match.group(1)


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


def get_arch_flags():
    """Target the architectures of the visible GPU unless TORCH_CUDA_ARCH_LIST is given."""
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return []
    flags = []
    for major, minor in {torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())}:
        flags += ["-gencode", f"arch=compute_{major}{minor},code=sm_{major}{minor}"]
    return flags


def get_ext_modules():
    ext_modules = []

    cuda_available = torch.cuda.is_available() and CUDA_HOME is not None
    if BUILD_CPP and (cuda_available or os.getenv("FORCE_CUDA_EXTENSION", "0") == "1"):
        print(f"Compiling custom CUDA kernels for torch-harmonics.")
        compile_args = get_compile_args("disco")
        compile_args["nvcc"] += get_arch_flags()
        ext_modules.append(
            CUDAExtension(
                "disco_cuda_extension",
                [
                    "torch_harmonics/csrc/disco/disco_interface.cu",
                    "torch_harmonics/csrc/disco/disco_cuda_fwd.cu",
                    "torch_harmonics/csrc/disco/disco_cuda_bwd.cu",
                ],
                extra_compile_args=compile_args,
            )
        )
    else:
        print("No CUDA toolkit found: building torch-harmonics without the DISCO CUDA kernels.")

    return ext_modules


if __name__ == "__main__":
    ext_modules = get_ext_modules()
    setup(
        name="torch_harmonics",
        version=get_version(),
        author="Boris Bonev",
        author_email="bbonev@nvidia.com",
        description="Differentiable signal processing on the sphere for PyTorch.",
        long_description=(HERE / "README.md").read_text(encoding="utf-8") if (HERE / "README.md").exists() else "",
        long_description_content_type="text/markdown",
        url="https://github.com/NVIDIA/torch-harmonics",
        license="Modified BSD",
        packages=find_packages(include=["torch_harmonics", "torch_harmonics.*"]),
        package_data={"torch_harmonics": ["csrc/**/*"]},
        python_requires=">=3.9",
        install_requires=["torch>=2.0", "numpy"],
        extras_require={
            "dev": ["pytest", "coverage", "black"],
            "2d3ds": ["requests", "tarfile", "tqdm", "PIL", "h5py"],
        },
        classifiers=[
            "Development Status :: 4 - Beta",
            "Programming Language :: Python :: 3",
            "License :: OSI Approved :: BSD License",
            "Operating System :: POSIX :: Linux",
        ],
        ext_modules=ext_modules,
        cmdclass={"build_ext": BuildExtension} if ext_modules else {},
    )
