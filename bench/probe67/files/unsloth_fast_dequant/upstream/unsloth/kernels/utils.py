# Copyright 2023-present Daniel Han-Chen & the Unsloth team. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
import ctypes
import functools

import bitsandbytes as bnb
import torch

from triton import __version__ as triton_version

HAS_CUDA_STREAM = triton_version.split(".")[0] != "2"  # triton 3 passes stream implicitly
get_ptr = bnb.functional.get_ptr

# torch.cuda.amp.custom_fwd is deprecated >= 2.4
torch_version = torch.__version__
if tuple(int(x) for x in torch_version.split(".")[:2]) < (2, 4):
    torch_amp_custom_fwd = torch.cuda.amp.custom_fwd
    torch_amp_custom_bwd = torch.cuda.amp.custom_bwd
else:
    torch_amp_custom_fwd = torch.amp.custom_fwd(device_type="cuda")
    torch_amp_custom_bwd = torch.amp.custom_bwd(device_type="cuda")

# Cache the per-device stream pointers once
CUDA_STREAMS = tuple(ctypes.c_void_p(torch.cuda.current_stream(i).cuda_stream) for i in range(torch.cuda.device_count()))
WEIGHT_BUFFERS = [None] * torch.cuda.device_count()
ABSMAX_BUFFERS = [None] * torch.cuda.device_count()

cdequantize_blockwise_fp32 = bnb.functional.lib.cdequantize_blockwise_fp32
cdequantize_blockwise_fp16_nf4 = bnb.functional.lib.cdequantize_blockwise_fp16_nf4
cdequantize_blockwise_bf16_nf4 = bnb.functional.lib.cdequantize_blockwise_bf16_nf4
cgemm_4bit_inference_naive_fp16 = bnb.functional.lib.cgemm_4bit_inference_naive_fp16
cgemm_4bit_inference_naive_bf16 = bnb.functional.lib.cgemm_4bit_inference_naive_bf16


def QUANT_STATE(W):
    return getattr(W, "quant_state", None)


def get_lora_parameters(proj):
    # For DPO or disabled adapters
    base_layer = proj.base_layer if hasattr(proj, "base_layer") else proj
    W = base_layer.weight
    if not hasattr(proj, "disable_adapters") or proj.disable_adapters or proj.merged:
        return W, QUANT_STATE(W), None, None, None
    active_adapter = proj.active_adapters[0] if hasattr(proj, "active_adapters") else proj.active_adapter
    A = proj.lora_A[active_adapter].weight
    B = proj.lora_B[active_adapter].weight
    s = proj.scaling[active_adapter]
    return W, QUANT_STATE(W), A, B, s


def fast_dequantize(W, quant_state=None, out=None, use_global_buffer=False):
    if quant_state is None:
        return W
    if type(quant_state) is not list:
        # New quant_state as a class
        absmax = quant_state.absmax
        shape = quant_state.shape
        dtype = quant_state.dtype
        blocksize = quant_state.blocksize
        offset = quant_state.offset
        state2 = quant_state.state2
        absmax2 = state2.absmax
        code2 = state2.code
        blocksize2 = state2.blocksize
    else:
        absmax, shape, dtype, blocksize, compressed_stats, _, _ = quant_state
        offset, state2 = compressed_stats
        absmax2, code2, blocksize2, _, _, _, _ = state2

    device = W.device
    device_index = device.index
    CUDA_STREAM = CUDA_STREAMS[device_index]

    n_elements_absmax = absmax.numel()

    # Create weight matrix
    if use_global_buffer:
        size = shape[0] * shape[1]
        WEIGHT_BUFFER = WEIGHT_BUFFERS[device_index]
        ABSMAX_BUFFER = ABSMAX_BUFFERS[device_index]
        if WEIGHT_BUFFER is None:
            WEIGHT_BUFFERS[device_index] = WEIGHT_BUFFER = torch.empty(size, dtype=dtype, device=device, requires_grad=False)
            ABSMAX_BUFFERS[device_index] = ABSMAX_BUFFER = torch.empty(n_elements_absmax, dtype=torch.float32, device=device, requires_grad=False)
        if size > WEIGHT_BUFFER.numel():
            WEIGHT_BUFFER.resize_(size)
        if n_elements_absmax > ABSMAX_BUFFER.numel():
            ABSMAX_BUFFER.resize_(n_elements_absmax)
        out = WEIGHT_BUFFER[:size].view(shape)
        out_absmax = ABSMAX_BUFFER[:n_elements_absmax]
    else:
        if out is None:
            out = torch.empty(shape, dtype=dtype, device=device, requires_grad=False)
        else:
            assert out.shape == shape
            assert out.dtype == dtype
        out_absmax = torch.empty(n_elements_absmax, dtype=torch.float32, device=device, requires_grad=False)

    # NF4 dequantization of statistics
    ptr_out_absmax = get_ptr(out_absmax)
    with torch.cuda.device(device):
        cdequantize_blockwise_fp32(
            get_ptr(code2), get_ptr(absmax), get_ptr(absmax2), ptr_out_absmax,
            ctypes.c_int(blocksize2), ctypes.c_int(n_elements_absmax), CUDA_STREAM,
        )
        out_absmax += offset

        # Dequantize W
        fx = cdequantize_blockwise_fp16_nf4 if dtype == torch.float16 else cdequantize_blockwise_bf16_nf4
        fx(get_ptr(None), get_ptr(W), ptr_out_absmax, get_ptr(out), ctypes.c_int(blocksize), ctypes.c_int(out.numel()), CUDA_STREAM)

    # Careful returning transposed data
    is_transposed = True if W.shape[0] == 1 else False
    return out.t() if is_transposed else out


def matmul_lora(X, W, W_quant, A, B, s, out=None):
    dtype = X.dtype
    W = fast_dequantize(W.t(), W_quant, use_global_buffer=True)

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
