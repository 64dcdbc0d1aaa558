# Copyright 2025 Ant Group Inc.
# Licensed under the Apache License, Version 2.0 (the "License").
#
# Builds the two native extensions used by the parameter-reallocation (actor -> generation server)
# path: a C++ interval-slicing op for CPU tensors and its CUDA twin, plus the fused
# GAE kernel used by the PPO interface.

import os
import re
import subprocess
import sys
from pathlib import Path

import setuptools
from packaging.version import Version, parse
from setuptools import find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT_DIR = os.path.dirname(__file__)

MAIN_CUDA_VERSION = "12.1"


def _is_cuda() -> bool:
    return os.getenv("REAL_CUDA", "1") == "1"


def _is_cpu() -> bool:
    return os.getenv("REAL_NO_EXT", "0") == "1"


def get_nvcc_cuda_version() -> Version:
    """Get the CUDA version from nvcc.

    Adapted from https://github.com/NVIDIA/apex/blob/8b7a1ff183741dd8f9b87e7bafd04cfde99cea28/setup.py
    """
    from torch.utils.cpp_extension import CUDA_HOME

    assert CUDA_HOME is not None, "CUDA_HOME is not set"
    nvcc_output = subprocess.check_output([CUDA_HOME + "/bin/nvcc", "-V"], universal_newlines=True)
    output = nvcc_output.split()
    release_idx = output.index("release") + 1
    nvcc_cuda_version = parse(output[release_idx].split(",")[0])
    return nvcc_cuda_version


def get_torch_arch_list() -> set:
    # TORCH_CUDA_ARCH_LIST can have one or more architectures,
    # e.g. "8.0" or "7.5,8.0,8.6+PTX". Here, the "8.6+PTX" option asks the
    # compiler to additionally include PTX code that can be runtime-compiled
    # and executed on the 8.6 or newer architectures.
    env_arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST", None)
    if env_arch_list is None:
        return set()

    # List are separated by ; or space.
    torch_arch_list = set(env_arch_list.replace(" ", ";").split(";"))
    if not torch_arch_list:
        return set()
    return torch_arch_list


def get_requirements() -> list:
    """Get Python package dependencies from requirements.txt."""
    with open(os.path.join(ROOT_DIR, "requirements.txt")) as f:
        requirements = f.read().strip().split("\n")
    return [r for r in requirements if r and not r.startswith("#")]


ext_modules = []

if not _is_cpu():
    import torch
    from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

    if not torch.cuda.is_available() and _is_cuda():
        print("Warning: torch.cuda is not available; building CUDA extensions for the archs in TORCH_CUDA_ARCH_LIST only", file=sys.stderr)

    CXX_FLAGS = ["-g", "-O2", "-std=c++17"]
    NVCC_FLAGS = ["-O3", "-std=c++17", "--use_fast_math", "-U__CUDA_NO_HALF_OPERATORS__", "-U__CUDA_NO_HALF_CONVERSIONS__"]

    ABI = 1 if torch._C._GLIBCXX_USE_CXX11_ABI else 0
    CXX_FLAGS += [f"-D_GLIBCXX_USE_CXX11_ABI={ABI}"]
    NVCC_FLAGS += [f"-D_GLIBCXX_USE_CXX11_ABI={ABI}"]

    if _is_cuda():
        nvcc_cuda_version = get_nvcc_cuda_version()
        if nvcc_cuda_version < Version("11.8"):
            raise RuntimeError("CUDA 11.8 or higher is required to build the package.")
        for arch in sorted(get_torch_arch_list()) or ["8.0", "9.0"]:
            num = arch.replace(".", "").replace("+PTX", "")
            NVCC_FLAGS += ["-gencode", f"arch=compute_{num},code=sm_{num}"]
        NVCC_FLAGS += ["--threads", str(min(os.cpu_count() or 1, 8))]

    interval_op_cpp = CppExtension(
        name="realhf._C.interval_op",
        sources=["csrc/interval_op/interval_op.cpp"],
        extra_compile_args={"cxx": CXX_FLAGS},
    )
    ext_modules.append(interval_op_cpp)

    if _is_cuda():
        interval_op_cuda = CUDAExtension(
            name="realhf._C.interval_op_cuda",
            sources=["csrc/interval_op/interval_op.cu", "csrc/interval_op/interval_op_cuda.cpp"],
            extra_compile_args={"cxx": CXX_FLAGS, "nvcc": NVCC_FLAGS},
            libraries=["cuda"],
        )
        ext_modules.append(interval_op_cuda)

        gae_cuda = CUDAExtension(
            name="realhf._C.cugae",
            sources=["csrc/cugae/gae.cu"],
            extra_compile_args={"cxx": CXX_FLAGS, "nvcc": NVCC_FLAGS},
        )
        ext_modules.append(gae_cuda)

    cmdclass = {"build_ext": BuildExtension}
else:
    cmdclass = {}


def read_version() -> str:
    text = Path(ROOT_DIR, "realhf", "version.py").read_text() if Path(ROOT_DIR, "realhf", "version.py").exists() else '__version__ = "0.3.0"'
    return re.search(r'__version__\s*=\s*"([^"]+)"', text).group(1)


setup(
    name="realhf",
    version=read_version(),
    packages=find_packages(exclude=("tests", "examples", "csrc")),
    ext_modules=ext_modules,
    cmdclass=cmdclass,
    python_requires=">=3.10",
    install_requires=get_requirements(),
    extras_require={
        "sglang": ["sglang[srt]==0.4.6.post4", "flashinfer-python==0.2.5"],
        "dev": ["pytest", "pre-commit"],
    },
    entry_points={
        "console_scripts": [
            "realhf-quickstart=realhf.apps.quickstart:main",
        ],
    },
)
