# Copyright (c) 2024, EleutherAI
# This file is based on code by the authors denoted below and has been modified from its original version.
#
# Copyright (c) 2020, NVIDIA CORPORATION.  All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.

import os
import pathlib
import subprocess

import torch
from torch.utils import cpp_extension

# Setting this param to a list has a problem of generating different
# compilation commands (with diferent order of architectures) and
# leading to recompilation of fused kernels. Set it to empty string
# to avoid recompilation and assign arch flags explicity in
# extra_cuda_cflags below
os.environ["TORCH_CUDA_ARCH_LIST"] = ""

srcpath = pathlib.Path(__file__).parent.absolute()
buildpath = srcpath / "build"


def _get_cuda_bare_metal_version(cuda_dir):
    raw_output = subprocess.check_output(
        [cuda_dir + "/bin/nvcc", "-V"], universal_newlines=True
    )
    output = raw_output.split()
    release_idx = output.index("release") + 1
    release = output[release_idx].split(".")
    bare_metal_major = release[0]
    bare_metal_minor = release[1][0]

    return raw_output, bare_metal_major, bare_metal_minor


def _create_build_dir(buildpath):
    try:
        os.mkdir(buildpath)
    except OSError:
        if not os.path.isdir(buildpath):
            print(f"Creation of the build directory {buildpath} failed")


def _cuda_arch_flags():
    # Check if cuda 11 is installed for compute capability 8.0
    cc_flag = []
    _, bare_metal_major, bare_metal_minor = _get_cuda_bare_metal_version(
        cpp_extension.CUDA_HOME
    )
    if int(bare_metal_major) >= 11:
        cc_flag.append("-gencode")
        cc_flag.append("arch=compute_80,code=sm_80")
        if int(bare_metal_minor) >= 8:
            cc_flag.append("-gencode")
            cc_flag.append("arch=compute_90,code=sm_90")
    return cc_flag


def _cpp_extention_load_helper(name, sources, extra_cuda_flags, cc_flag):
    return cpp_extension.load(
        name=name,
        sources=sources,
        build_directory=buildpath,
        extra_cflags=["-O3"],
        extra_cuda_cflags=[
            "-O3",
            "-gencode",
            "arch=compute_70,code=sm_70",
            "--use_fast_math",
        ]
        + extra_cuda_flags
        + cc_flag,
        verbose=True,
    )


def load_fused_kernels():
    """Build (JIT) and import the fused softmax / rotary kernels.

    Called from initialize_megatron when any of the fusion flags is set.
    """
    _create_build_dir(buildpath)
    cc_flag = _cuda_arch_flags()

    extra_cuda_flags = [
        "-U__CUDA_NO_HALF_OPERATORS__",
        "-U__CUDA_NO_HALF_CONVERSIONS__",
        "--expt-relaxed-constexpr",
        "--expt-extended-lambda",
    ]

    # Upper triangular softmax.
    sources = [
        srcpath / "scaled_upper_triang_masked_softmax.cpp",
        srcpath / "scaled_upper_triang_masked_softmax_cuda.cu",
    ]
    scaled_upper_triang_masked_softmax_cuda = _cpp_extention_load_helper(
        "scaled_upper_triang_masked_softmax_cuda", sources, extra_cuda_flags, cc_flag
    )

    # Masked softmax.
    sources = [
        srcpath / "scaled_masked_softmax.cpp",
        srcpath / "scaled_masked_softmax_cuda.cu",
    ]
    scaled_masked_softmax_cuda = _cpp_extention_load_helper(
        "scaled_masked_softmax_cuda", sources, extra_cuda_flags, cc_flag
    )

    # Fused rotary positional embedding.
    sources = [
        srcpath / "fused_rotary_positional_embedding.cpp",
        srcpath / "fused_rotary_positional_embedding_cuda.cu",
    ]
    fused_rotary_positional_embedding_cuda = _cpp_extention_load_helper(
        "fused_rotary_positional_embedding_cuda", sources, extra_cuda_flags, cc_flag
    )

    return (
        scaled_upper_triang_masked_softmax_cuda,
        scaled_masked_softmax_cuda,
        fused_rotary_positional_embedding_cuda,
    )


def get_fused_kernels_status():
    """Used by the unit tests to skip when the extension is missing."""
    try:
        import scaled_upper_triang_masked_softmax_cuda  # noqa: F401
        import scaled_masked_softmax_cuda  # noqa: F401
    except (ImportError, ModuleNotFoundError):
        return False
    return True


def load_fused_kernels_or_warn(neox_args):
    if get_fused_kernels_status():
        return
    if torch.distributed.is_initialized() and torch.distributed.get_rank() != 0:
        return
    print(
        "fused kernels not found: falling back to the torch softmax path. "
        "set scaled_upper_triang_masked_softmax_fusion=false to silence this."
    )
