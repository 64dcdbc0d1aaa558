# Copyright 2023-present the Unsloth-style kernel authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.

import functools
import os
from contextlib import nullcontext

import triton
import torch
from packaging.version import Version

MAX_FUSED_SIZE: int = 65536
next_power_of_2 = triton.next_power_of_2

# torch.cuda.amp.custom_fwd is deprecated >= 2.4
torch_Tensor = torch.Tensor
if Version(torch.__version__) < Version("2.4.0"):
    torch_amp_custom_fwd = torch.cuda.amp.custom_fwd
    torch_amp_custom_bwd = torch.cuda.amp.custom_bwd
else:
    torch_amp_custom_fwd = torch.amp.custom_fwd(device_type="cuda")
    torch_amp_custom_bwd = torch.amp.custom_bwd(device_type="cuda")

# tl.math.tanh now is libdevice.tanh
if Version(triton.__version__) >= Version("3.0.0"):
    from triton.language.extra import libdevice
    triton_tanh = libdevice.tanh
    triton_cast = tl_cast = None
else:
    import triton.language as tl
    triton_tanh = tl.math.tanh

DEVICE_TYPE = "cuda"
DEVICE_COUNT = torch.cuda.device_count()

# Some GPUs (T4, V100) have no bf16 support; Ampere+ does.
major_version, minor_version = torch.cuda.get_device_capability()
SUPPORTS_BFLOAT16 = major_version >= 8


def calculate_settings(n: int) -> (int, int,):
    BLOCK_SIZE: int = next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError(
            f"Cannot launch Triton kernel since n = {n} exceeds "
            f"the maximum CUDA blocksize = {MAX_FUSED_SIZE}."
        )
    num_warps: int = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps


# Multi-GPU: kernels must launch on the tensor's device, otherwise Triton
# launches on device 0 and produces illegal memory accesses.
if DEVICE_COUNT > 1:
    torch_gpu_device = torch.cuda.device
else:
    @functools.lru_cache
    def torch_gpu_device(device):
        return nullcontext()


# CUDA streams are needed by the bitsandbytes dequant kernels below.
CUDA_STREAMS = tuple(
    torch.cuda.current_stream(torch.device(f"cuda:{i}")).cuda_stream
    for i in range(DEVICE_COUNT)
)


def get_lora_parameters(proj):
    # For DPO or disabled adapters
    base_layer = getattr(proj, "base_layer", proj)  # (proj.base_layer if hasattr(proj, "base_layer") else proj)
    W = base_layer.weight

    if getattr(proj, "disable_adapters", True) or proj.merged:
        return W, getattr(W, "quant_state", None), None, None, None

    adapter = getattr(proj, "active_adapters", None)
    if adapter is None:
        adapter = getattr(proj, "active_adapter", ("default"))
    adapter = adapter[0]

    return (
        W,
        getattr(W, "quant_state", None),
        proj.lora_A[adapter].weight,
        proj.lora_B[adapter].weight,
        proj.scaling[adapter],
    )


def fast_dequantize(W, quant_state=None, out=None):
    if quant_state is None:
        return W
    import bitsandbytes as bnb
    if type(quant_state) is not list:
        absmax = quant_state.absmax
        shape = quant_state.shape
        dtype = quant_state.dtype
    else:
        absmax, shape, dtype, blocksize, compressed_stats, _, _ = quant_state
    device = W.device
    with torch_gpu_device(device):
        out = torch.empty(shape, dtype=dtype, device=device, requires_grad=False)
        return bnb.functional.dequantize_4bit(W, quant_state, out=out)


def matmul_lora(X, W, W_quant, A, B, s, out=None):
    dtype = X.dtype
    W = fast_dequantize(W.t(), W_quant)

    if X.dim() == 3:
        batch, seq_len, d = X.shape
        X = X.view(-1, X.shape[-1])
        reshape = True
    else:
        reshape = False

    out = torch.matmul(X, W, out=out)
    if W_quant is not None:
        del W

    if A is not None:
        # LoRA is enabled
        A, B = A.t(), B.t()
        out += (X @ A.to(dtype)) @ (s * B.to(dtype))

    return out.view(batch, seq_len, -1) if reshape else out
