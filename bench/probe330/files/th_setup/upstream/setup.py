# coding=utf-8

# SPDX-FileCopyrightText: Copyright (c) 2024 The torch-harmonics Authors. All rights reserved.
# SPDX-License-Identifier: BSD-3-Clause
#

import os
import re
import sys
import warnings
from pathlib import Path

from setuptools import find_packages, setup

try:
    import torch
    from torch.utils import cpp_extension

    _torch_available = True
except (ImportError, ModuleNotFoundError):
    warnings.warn("PyTorch not found at build time; torch-harmonics will be installed without the custom CUDA kernels.")
    _torch_available = False


def version(root_path):
    """Returns the version taken from __init__.py

    Parameters
    ----------
    root_path : pathlib.Path
        path to the root of the package

    Reference
    ---------
    https://packaging.python.org/guides/single-sourcing-package-version/
    """
    version_path = root_path.joinpath("torch_harmonics", "__init__.py")
    with version_path.open() as f:
        version_file = f.read()
    version_match = re.search(r"^__version__ = ['\"]([^'\"]*)['\"]", version_file, re.M)
    if version_match:
        return version_match.group(1)
    raise RuntimeError("Unable to find version string.")


def readme(root_path):
    """Returns the text content of the README.md of the package"""
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
        return {"cxx": ["-g", "-O0"], "nvcc": ["-g", "-G", "-O0"] + nvcc_extra_flags}
    else:
        print(f"NOTE: Compiling {module_name} with release flags")
        return {"cxx": ["-O3", "-DNDEBUG"], "nvcc": ["-O3", "-DNDEBUG", "--use_fast_math"] + nvcc_extra_flags}


def get_ext_modules():
    """Build the DISCO CUDA kernels when a CUDA toolkit is present (or forced)."""
    ext_modules = []
    cmdclass = {}

    if not _torch_available:
        return ext_modules, cmdclass

    cuda_available = torch.cuda.is_available() or cpp_extension.CUDA_HOME is not None
    if cuda_available or os.getenv("FORCE_CUDA_EXTENSION", "0") == "1":
        print("Compiling custom CUDA kernels for torch-harmonics.")
        os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0 7.5 8.0 8.6 9.0+PTX")
        ext_modules.append(
            cpp_extension.CUDAExtension(
                "disco_cuda_extension",
                [
                    "torch_harmonics/csrc/disco/disco_interface.cu",
                    "torch_harmonics/csrc/disco/disco_cuda_fwd.cu",
                    "torch_harmonics/csrc/disco/disco_cuda_bwd.cu",
                ],
                extra_compile_args=get_compile_args("disco_kernels"),
            )
        )
        cmdclass["build_ext"] = cpp_extension.BuildExtension.with_options(use_ninja=True)
    else:
        print("CUDA not found: skipping the DISCO CUDA extension (slow PyTorch fallback will be used).")

    return ext_modules, cmdclass


root_path = Path(__file__).parent
README = readme(root_path)
VERSION = version(root_path)

ext_modules, cmdclass = get_ext_modules()

config = {
    "name": "torch_harmonics",
    "packages": find_packages(),
    "author": "Boris Bonev",
    "author_email": "bbonev@nvidia.com",
    "version": VERSION,
    "description": "A differentiable spherical harmonic transform for PyTorch.",
    "long_description": README,
    "long_description_content_type": "text/markdown",
    "url": "https://github.com/NVIDIA/torch-harmonics",
    "license": "Modified BSD",
    "install_requires": ["torch", "numpy"],
    "extras_require": {
        "sfno": ["tensorly", "tensorly-torch"],
    },
    "ext_modules": ext_modules,
    "cmdclass": cmdclass,
}

setup(**config)
