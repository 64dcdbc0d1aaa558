# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.

# pyre-unsafe

import abc
import logging
import os
from enum import Enum, unique
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F

import fbgemm_gpu  # noqa: F401  registers torch.ops.fbgemm.*

from generative_recommenders_lite.ops.triton.triton_hstu_attention import triton_hstu_mha

logger = logging.getLogger(__name__)

_HSTU_OPS_LIB = os.path.join(os.path.dirname(__file__), "..", "csrc", "build", "libhstu_cuda_ops.so")
if os.path.exists(_HSTU_OPS_LIB):
    torch.ops.load_library(_HSTU_OPS_LIB)


@unique
class HammerKernel(Enum):
    PYTORCH = "PYTORCH"
    TRITON = "TRITON"
    CUDA = "CUDA"


class HammerModule(torch.nn.Module, abc.ABC):
    def __init__(self, is_inference: bool, kernel: HammerKernel = HammerKernel.TRITON) -> None:
        super().__init__()
        self._is_inference = is_inference
        self._hammer_kernel = kernel

    def hammer_kernel(self) -> HammerKernel:
        return self._hammer_kernel


def pytorch_hstu_mha(
    max_seq_len: int,
    alpha: float,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    seq_offsets: torch.Tensor,
    causal: bool = True,
) -> torch.Tensor:
    L, H, D = q.shape
    B = seq_offsets.numel() - 1
    padded_q = torch.ops.fbgemm.jagged_to_padded_dense(
        values=q.reshape(L, H * D), offsets=[seq_offsets], max_lengths=[max_seq_len], padding_value=0.0
    ).view(B, max_seq_len, H, D)
    padded_k = torch.ops.fbgemm.jagged_to_padded_dense(
        values=k.reshape(L, H * D), offsets=[seq_offsets], max_lengths=[max_seq_len], padding_value=0.0
    ).view(B, max_seq_len, H, D)
    padded_v = torch.ops.fbgemm.jagged_to_padded_dense(
        values=v.reshape(L, H * v.shape[-1]), offsets=[seq_offsets], max_lengths=[max_seq_len], padding_value=0.0
    ).view(B, max_seq_len, H, v.shape[-1])
    qk_attn = torch.einsum("bnhd,bmhd->bhnm", padded_q, padded_k) * alpha
    qk_attn = F.silu(qk_attn) / max_seq_len
    if causal:
        mask = torch.tril(torch.ones((max_seq_len, max_seq_len), dtype=torch.bool, device=q.device))
        qk_attn = qk_attn * mask.unsqueeze(0).unsqueeze(0)
    attn_dense = torch.einsum("bhnm,bmhd->bnhd", qk_attn, padded_v)
    return torch.ops.fbgemm.dense_to_jagged(
        attn_dense.reshape(B, max_seq_len, -1), [seq_offsets]
    )[0].view(L, H, -1)


def hstu_mha(
    max_seq_len: int,
    alpha: float,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    seq_offsets: torch.Tensor,
    causal: bool = True,
    kernel: HammerKernel = HammerKernel.PYTORCH,
) -> torch.Tensor:
    if kernel == HammerKernel.TRITON:
        return triton_hstu_mha(max_seq_len, alpha, q, k, v, seq_offsets, causal)
    elif kernel == HammerKernel.CUDA:
        return torch.ops.hstu_lite.hstu_mha_fwd(
            max_seq_len, alpha, q, k, v, seq_offsets, causal, None, None
        )[0]
    return pytorch_hstu_mha(max_seq_len, alpha, q, k, v, seq_offsets, causal)


class SequentialTransductionUnit(HammerModule):
    def __init__(
        self,
        embedding_dim: int,
        linear_hidden_dim: int,
        attention_dim: int,
        num_heads: int,
        dropout_ratio: float = 0.3,
        is_inference: bool = False,
        kernel: HammerKernel = HammerKernel.TRITON,
    ) -> None:
        super().__init__(is_inference=is_inference, kernel=kernel)
        self._embedding_dim = embedding_dim
        self._linear_dim = linear_hidden_dim
        self._attention_dim = attention_dim
        self._num_heads = num_heads
        self._dropout_ratio = dropout_ratio
        self._uvqk = torch.nn.Parameter(
            torch.empty(
                (embedding_dim, linear_hidden_dim * 2 * num_heads + attention_dim * num_heads * 2)
            ).normal_(mean=0, std=0.02)
        )
        self._o = torch.nn.Linear(linear_hidden_dim * num_heads, embedding_dim)
        torch.nn.init.xavier_uniform_(self._o.weight)

    def forward(self, x: torch.Tensor, x_offsets: torch.Tensor, max_seq_len: int) -> torch.Tensor:
        normed_x = F.layer_norm(x, normalized_shape=[self._embedding_dim], eps=1e-6)
        batched_mm_output = torch.mm(normed_x, self._uvqk)
        batched_mm_output = F.silu(batched_mm_output)
        u, v, q, k = torch.split(
            batched_mm_output,
            [
                self._linear_dim * self._num_heads,
                self._linear_dim * self._num_heads,
                self._attention_dim * self._num_heads,
                self._attention_dim * self._num_heads,
            ],
            dim=1,
        )
        q = q.view(-1, self._num_heads, self._attention_dim)
        k = k.view(-1, self._num_heads, self._attention_dim)
        v = v.view(-1, self._num_heads, self._linear_dim)
        attn_output = hstu_mha(
            max_seq_len=max_seq_len,
            alpha=1.0 / (self._attention_dim ** 0.5),
            q=q, k=k, v=v,
            seq_offsets=x_offsets,
            causal=True,
            kernel=self.hammer_kernel(),
        ).reshape(-1, self._linear_dim * self._num_heads)
        o_input = u * F.layer_norm(attn_output, normalized_shape=[self._linear_dim * self._num_heads], eps=1e-6)
        new_outputs = self._o(F.dropout(o_input, p=self._dropout_ratio, training=self.training)) + x
        return new_outputs


class HSTUEmbeddings(torch.nn.Module):
    """Item + category id features pooled with EmbeddingBag, then jagged."""

    def __init__(self, num_items: int, num_categories: int, dim: int) -> None:
        super().__init__()
        self.item_emb = torch.nn.Embedding(num_items + 1, dim, padding_idx=0, sparse=True)
        self.category_bag = torch.nn.EmbeddingBag(num_categories, dim, mode="sum", sparse=True)

    def forward(
        self,
        item_ids: torch.Tensor,
        lengths: torch.Tensor,
        category_ids: torch.Tensor,
        category_offsets: torch.Tensor,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        x_offsets = torch.ops.fbgemm.asynchronous_complete_cumsum(lengths)
        item = self.item_emb(item_ids)
        cat = self.category_bag(category_ids, category_offsets)
        cat = torch.repeat_interleave(cat, lengths, dim=0)
        return item + cat, x_offsets


def build_stu_stack(num_blocks: int, dim: int, heads: int, kernel: HammerKernel = HammerKernel.TRITON) -> torch.nn.ModuleList:
    return torch.nn.ModuleList(
        [
            SequentialTransductionUnit(
                embedding_dim=dim,
                linear_hidden_dim=dim // heads,
                attention_dim=dim // heads,
                num_heads=heads,
                kernel=kernel,
            )
            for _ in range(num_blocks)
        ]
    )
