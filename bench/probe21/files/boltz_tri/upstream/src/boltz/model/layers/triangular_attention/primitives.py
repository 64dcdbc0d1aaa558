# Copyright 2021 AlQuraishi Laboratory
# Copyright 2021 DeepMind Technologies Limited
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.

import importlib
import math
from typing import List, Optional, Tuple

import torch
from torch import nn

from boltz.model.layers import initialize as init
from boltz.model.layers.triangular_attention.utils import flatten_final_dims, permute_final_dims

deepspeed_is_installed = importlib.util.find_spec("deepspeed") is not None
ds4s_is_installed = deepspeed_is_installed and importlib.util.find_spec("deepspeed.ops.deepspeed4science") is not None
if ds4s_is_installed:
    from deepspeed.ops.deepspeed4science import DS4Sci_EvoformerAttention

cueq_is_installed = importlib.util.find_spec("cuequivariance_torch") is not None
if cueq_is_installed:
    from cuequivariance_torch.primitives.triangle import triangle_attention as cueq_triangle_attention


class Linear(nn.Linear):
    def __init__(self, in_dim: int, out_dim: int, bias: bool = True, init: str = "default"):
        super().__init__(in_dim, out_dim, bias=bias)
        if bias:
            with torch.no_grad():
                self.bias.fill_(0)
        with torch.no_grad():
            if init == "default":
                nn.init.kaiming_normal_(self.weight, nonlinearity="linear")
            elif init == "glorot":
                nn.init.xavier_uniform_(self.weight, gain=1)
            elif init == "gating":
                self.weight.fill_(0.0)
                if bias:
                    self.bias.fill_(1.0)
            elif init == "final":
                self.weight.fill_(0.0)
            else:
                raise ValueError("Invalid init string.")


def softmax_no_cast(t: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """
    Softmax, but without automatic casting to fp32 when the input is of
    type bfloat16
    """
    d = t.dtype
    if d is torch.bfloat16:
        with torch.autocast("cuda", enabled=False):
            s = torch.nn.functional.softmax(t, dim=dim)
    else:
        s = torch.nn.functional.softmax(t, dim=dim)
    return s


def _attention(query, key, value, biases):
    # [*, H, C_hidden, K]
    key = permute_final_dims(key, (1, 0))
    # [*, H, Q, K]
    a = torch.matmul(query, key)
    for b in biases:
        a += b
    a = softmax_no_cast(a, -1)
    # [*, H, Q, C_hidden]
    a = torch.matmul(a, value)
    return a


@torch.compiler.disable
def _deepspeed_evo_attn(q, k, v, biases):
    """DeepSpeed4Science EvoformerAttention kernel (CUTLASS), bf16/fp16 only."""
    if not ds4s_is_installed:
        raise ValueError("_deepspeed_evo_attn requires that DeepSpeed be installed and that the deepspeed.ops.deepspeed4science package exists")
    # [*, Q/K, H, C_hidden]
    q = q.transpose(-2, -3)
    k = k.transpose(-2, -3)
    v = v.transpose(-2, -3)
    orig_dtype = q.dtype
    if orig_dtype not in [torch.bfloat16, torch.float16]:
        o = DS4Sci_EvoformerAttention(q.to(dtype=torch.bfloat16), k.to(dtype=torch.bfloat16), v.to(dtype=torch.bfloat16),
                                      [b.to(dtype=torch.bfloat16) for b in biases])
        o = o.to(dtype=orig_dtype)
    else:
        o = DS4Sci_EvoformerAttention(q, k, v, biases)
    return o


class Attention(nn.Module):
    """
    Standard multi-head attention using AlphaFold's default layer
    initialization. Allows multiple bias vectors.
    """

    def __init__(self, c_q: int, c_k: int, c_v: int, c_hidden: int, no_heads: int, gating: bool = True):
        super().__init__()
        self.c_q = c_q
        self.c_k = c_k
        self.c_v = c_v
        self.c_hidden = c_hidden
        self.no_heads = no_heads
        self.gating = gating

        self.linear_q = Linear(self.c_q, self.c_hidden * self.no_heads, bias=False, init="glorot")
        self.linear_k = Linear(self.c_k, self.c_hidden * self.no_heads, bias=False, init="glorot")
        self.linear_v = Linear(self.c_v, self.c_hidden * self.no_heads, bias=False, init="glorot")
        self.linear_o = Linear(self.c_hidden * self.no_heads, self.c_q, init="final")

        self.linear_g = None
        if self.gating:
            self.linear_g = Linear(self.c_q, self.c_hidden * self.no_heads, init="gating")

        self.sigmoid = nn.Sigmoid()

    def _prep_qkv(self, q_x, kv_x, apply_scale: bool = True):
        q = self.linear_q(q_x)
        k = self.linear_k(kv_x)
        v = self.linear_v(kv_x)
        q = q.view(q.shape[:-1] + (self.no_heads, -1))
        k = k.view(k.shape[:-1] + (self.no_heads, -1))
        v = v.view(v.shape[:-1] + (self.no_heads, -1))
        # [*, H, Q/K, C_hidden]
        q = q.transpose(-2, -3)
        k = k.transpose(-2, -3)
        v = v.transpose(-2, -3)
        if apply_scale:
            q /= math.sqrt(self.c_hidden)
        return q, k, v

    def _wrap_up(self, o, q_x):
        if self.linear_g is not None:
            g = self.sigmoid(self.linear_g(q_x))
            g = g.view(g.shape[:-1] + (self.no_heads, -1))
            o = o * g
        o = flatten_final_dims(o, 2)
        o = self.linear_o(o)
        return o

    def forward(self, q_x, kv_x, tri_bias, mask_bias, mask, use_kernels: bool = False):
        if use_kernels and cueq_is_installed and q_x.is_cuda:
            q, k, v = self._prep_qkv(q_x, kv_x, apply_scale=False)
            scale = 1.0 / math.sqrt(self.c_hidden)
            o = cueq_triangle_attention(q, k, v, tri_bias, mask=mask.bool(), scale=scale)
            o = o.transpose(-2, -3)
        elif use_kernels and ds4s_is_installed:
            q, k, v = self._prep_qkv(q_x, kv_x)
            o = _deepspeed_evo_attn(q, k, v, [mask_bias, tri_bias])
        else:
            q, k, v = self._prep_qkv(q_x, kv_x)
            biases = [mask_bias, tri_bias]
            o = _attention(q, k, v, biases)
            o = o.transpose(-2, -3)
        o = self._wrap_up(o, q_x)
        return o
