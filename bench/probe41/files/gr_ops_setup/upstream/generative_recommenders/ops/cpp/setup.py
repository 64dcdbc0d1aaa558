# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
Builds the two native extensions used by generative_recommenders:

  * hstu_ops      -> libhstu_ops.so   (jagged helpers: concat/expand/cumsum/sort)
  * hstu_attn_cuda                    (HSTU fused attention, CUTLASS 3.x / FA3 style;
                                       sm80 path + sm90 warp-specialised path)

Usage:
    cd generative_recommenders/ops/cpp
    HSTU_DISABLE_SM90=0 python setup.py build_ext --inplace
"""

import os
import subprocess
import sys
import warnings
from pathlib import Path

from packaging.version import parse, Version
from setuptools import setup

import torch
from torch.utils.cpp_extension import BuildExtension, CUDA_HOME, CUDAExtension

this_dir = Path(__file__).resolve().parent

PACKAGE_NAME = "hstu_ops"
BUILD_TARGET = os.environ.get("HSTU_BUILD_TARGET", "all")  # all | ops | attn
DISABLE_SM90 = os.environ.get("HSTU_DISABLE_SM90", "FALSE").upper() == "TRUE"
DISABLE_BACKWARD = os.environ.get("HSTU_DISABLE_BACKWARD", "FALSE").upper() == "TRUE"
DISABLE_BF16 = os.environ.get("HSTU_DISABLE_BF16", "FALSE").upper() == "TRUE"
DISABLE_FP8 = os.environ.get("HSTU_DISABLE_FP8", "TRUE").upper() == "TRUE"


def get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output(
        [os.path.join(cuda_dir, "bin", "nvcc"), "-V"], universal_newlines=True
    )
    output = raw_output.split()
    release_idx = output.index("release") + 1
    bare_metal_version = parse(output[release_idx].split(",")[0])
    return raw_output, bare_metal_version


def check_if_cuda_home_none(global_option: str) -> None:
    if CUDA_HOME is not None:
        return
    # warn instead of error because user could be downloading prebuilt wheels, so nvcc won't be necessary
    # in that case.
    raise RuntimeError(
        f"{global_option} was requested, but nvcc was not found.  Are you sure your environment has nvcc available?  "
        "If you're installing within a container from https://hub.docker.com/r/pytorch/pytorch, "
        "only images whose names contain 'devel' will provide nvcc."
    )


def append_nvcc_threads(nvcc_extra_args):
    nvcc_threads = os.getenv("NVCC_THREADS") or "4"
    return nvcc_extra_args + ["--threads", nvcc_threads]


check_if_cuda_home_none(PACKAGE_NAME)
_, bare_metal_version = get_cuda_bare_metal_version(CUDA_HOME)
if bare_metal_version < Version("12.3"):
    raise RuntimeError("HSTU attention is only supported on CUDA 12.3 and above")

cc_flag = []
cc_flag.append("-gencode")
cc_flag.append("arch=compute_80,code=sm_80")
if not DISABLE_SM90:
    cc_flag.append("-gencode")
    cc_flag.append("arch=compute_90a,code=sm_90a")

# Keep ptxas from spilling on the large tile configurations.
os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0;9.0a"

cutlass_dir = this_dir / "third_party" / "cutlass"
if not (cutlass_dir / "include").exists():
    subprocess.run(["git", "submodule", "update", "--init", "third_party/cutlass"], check=False)

feature_args = (
    []
    + (["-DHSTU_DISABLE_BACKWARD"] if DISABLE_BACKWARD else [])
    + (["-DHSTU_DISABLE_BF16"] if DISABLE_BF16 else [])
    + (["-DHSTU_DISABLE_FP8"] if DISABLE_FP8 else [])
    + (["-DHSTU_DISABLE_SM90"] if DISABLE_SM90 else [])
)

nvcc_flags = [
    "-O3",
    "-std=c++17",
    "-U__CUDA_NO_HALF_OPERATORS__",
    "-U__CUDA_NO_HALF_CONVERSIONS__",
    "-U__CUDA_NO_BFLOAT16_OPERATORS__",
    "-U__CUDA_NO_BFLOAT16_CONVERSIONS__",
    "-U__CUDA_NO_BFLOAT162_OPERATORS__",
    "-U__CUDA_NO_BFLOAT162_CONVERSIONS__",
    "--expt-relaxed-constexpr",
    "--expt-extended-lambda",
    "--use_fast_math",
    "-DCUTLASS_DEBUG_TRACE_LEVEL=0",
    "-DNDEBUG",
    "-lineinfo",
]

ext_modules = []

if BUILD_TARGET in ("all", "ops"):
    ext_modules.append(
        CUDAExtension(
            name="libhstu_ops",
            sources=[
                "csrc/hstu_ops.cpp",
                "csrc/concat_1d_jagged_jagged.cu",
                "csrc/expand_1d_jagged_to_dense.cu",
                "csrc/batched_complete_cumsum.cu",
                "csrc/sort_by_length.cu",
                "csrc/jagged_transpose_1d.cu",
            ],
            extra_compile_args={
                "cxx": ["-O3", "-std=c++17"],
                "nvcc": append_nvcc_threads(nvcc_flags + cc_flag),
            },
            include_dirs=[this_dir / "csrc"],
        )
    )

if BUILD_TARGET in ("all", "attn"):
    attn_sources = ["hstu_attention/hstu_api.cpp"]
    for dtype in (["fp16"] + ([] if DISABLE_BF16 else ["bf16"])):
        for hdim in [32, 64, 128, 256]:
            attn_sources.append(f"hstu_attention/instantiations/hstu_fwd_hdim{hdim}_{dtype}_sm80.cu")
            if not DISABLE_SM90:
                attn_sources.append(
                    f"hstu_attention/instantiations/hstu_fwd_hdim{hdim}_{dtype}_sm90.cu"
                )
            if not DISABLE_BACKWARD:
                attn_sources.append(
                    f"hstu_attention/instantiations/hstu_bwd_hdim{hdim}_{dtype}_sm80.cu"
                )
    attn_ext = CUDAExtension(
        name="hstu_attn_cuda",
        sources=attn_sources,
        extra_compile_args={
            "cxx": ["-O3", "-std=c++17"] + feature_args,
            "nvcc": append_nvcc_threads(nvcc_flags + cc_flag + feature_args),
        },
        include_dirs=[
            this_dir / "hstu_attention",
            cutlass_dir / "include",
            cutlass_dir / "tools" / "util" / "include",
        ],
        libraries=["cuda"],
    )
    ext_modules.append(attn_ext)

if not ext_modules:
    warnings.warn(f"HSTU_BUILD_TARGET={BUILD_TARGET!r} selects nothing to build")
    sys.exit(0)

setup(
    name=PACKAGE_NAME,
    version="0.1.0",
    description="HSTU jagged ops and fused attention kernels",
    ext_modules=ext_modules,
    cmdclass={"build_ext": BuildExtension},
    python_requires=">=3.10",
    install_requires=["torch>=2.4.0", "packaging", "ninja"],
)
