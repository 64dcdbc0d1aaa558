# Copyright 2023 MosaicML / contributors
# SPDX-License-Identifier: Apache-2.0
"""Build script for `llmfoundry-kernels`: fused cross-entropy and RMSNorm CUDA kernels used by the training recipes."""

import os
import subprocess
import sys
from pathlib import Path

from setuptools import find_packages, setup

import torch
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension

_PACKAGE_NAME = "llmfoundry_kernels"
_REPO = Path(__file__).parent


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output([cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True)
    output = raw_output.split()
    release_idx = output.index("release") + 1
    release = output[release_idx].split(".")
    return raw_output, int(release[0]), int(release[1][0])


def check_cuda_torch_binary_vs_bare_metal(cuda_dir):
    raw_output, bare_major, bare_minor = get_cuda_bare_metal_version(cuda_dir)
    torch_major, torch_minor = torch.version.cuda.split(".")[:2]
    if (bare_major, bare_minor) != (int(torch_major), int(torch_minor)):
        raise RuntimeError(
            "Cuda extensions are being compiled with a version of Cuda that does not match the version used "
            f"to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda {torch.version.cuda}.\n"
            + raw_output
        )


def append_nvcc_threads(nvcc_extra_args):
    return nvcc_extra_args + ["--threads", "4"]


ext_modules = []
cmdclass = {}

if os.environ.get("LLMFOUNDRY_KERNELS_SKIP_BUILD", "0") != "1":
    if CUDA_HOME is None:
        raise RuntimeError(
            "CUDA_HOME is not set. Fused kernels need nvcc; install the CUDA toolkit or set "
            "LLMFOUNDRY_KERNELS_SKIP_BUILD=1 to use the pure-PyTorch fallbacks."
        )
    check_cuda_torch_binary_vs_bare_metal(CUDA_HOME)

    cc_flag = []
    for arch in os.environ.get("TORCH_CUDA_ARCH_LIST", "8.0;9.0").split(";"):
        arch = arch.replace(".", "")
        cc_flag += ["-gencode", f"arch=compute_{arch},code=sm_{arch}"]

    ext_modules.append(
        CUDAExtension(
            name="llmfoundry_kernels._C",
            sources=[
                "csrc/bindings.cpp",
                "csrc/cross_entropy_kernel.cu",
                "csrc/rms_norm_kernel.cu",
            ],
            include_dirs=[str(_REPO / "csrc" / "include")],
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": append_nvcc_threads(
                    [
                        "-O3",
                        "-std=c++17",
                        "--use_fast_math",
                        "-U__CUDA_NO_HALF_OPERATORS__",
                        "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
                        "--expt-relaxed-constexpr",
                    ]
                    + cc_flag
                ),
            },
        )
    )
    cmdclass["build_ext"] = BuildExtension.with_options(use_ninja=True)

install_requires = [
    "torch>=2.1",
    "einops",
    "triton>=2.1.0; platform_machine=='x86_64'",
]

setup(
    name=_PACKAGE_NAME.replace("_", "-"),
    version="0.3.0",
    description="Fused CUDA kernels for LLM training",
    long_description=(_REPO / "README.md").read_text() if (_REPO / "README.md").exists() else "",
    long_description_content_type="text/markdown",
    packages=find_packages(exclude=("csrc", "tests", "benchmarks")),
    ext_modules=ext_modules,
    cmdclass=cmdclass,
    python_requires=">=3.9",
    install_requires=install_requires,
    extras_require={"test": ["pytest", "numpy"]},
    classifiers=[
        "Programming Language :: Python :: 3",
        "Environment :: GPU :: NVIDIA CUDA :: 12",
        "License :: OSI Approved :: Apache Software License",
    ],
)
