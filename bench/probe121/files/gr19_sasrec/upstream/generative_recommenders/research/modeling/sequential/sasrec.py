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

# pyre-unsafe

"""
Implements SASRec (Self-Attentive Sequential Recommendation, https://arxiv.org/abs/1808.09781, ICDM'18).

Compared with the original paper which used BCE loss, this implementation is modified so that
we can utilize a Sampled Softmax loss proposed in Revisiting Neural Retrieval on Accelerators
(https://arxiv.org/abs/2306.04039, KDD'23) and Linear-time Self Attention with Codeword Histogram
for Efficient Recommendation (https://arxiv.org/abs/2105.14068, WWW'21), where we showed it to be
more effective than BCE loss for retrieval.

The "flash" variant runs attention on the jagged (unpadded) sequences with
FlashAttention-2's varlen kernel, which is ~3x faster than the padded SDPA path
for long-tail length distributions.
"""

import contextlib
import math
from typing import Dict, Optional, Tuple

import torch
import torch.nn.functional as F

from flash_attn import flash_attn_varlen_func

from generative_recommenders.research.modeling.sequential.embedding_modules import (
    EmbeddingModule,
)
from generative_recommenders.research.modeling.sequential.input_features_preprocessors import (
    InputFeaturesPreprocessorModule,
)
from generative_recommenders.research.modeling.sequential.output_postprocessors import (
    OutputPostprocessorModule,
)
from generative_recommenders.research.modeling.sequential.utils import (
    get_current_embeddings,
)
from generative_recommenders.research.modeling.similarity_module import (
    SequentialEncoderWithLearnedSimilarityModule,
)
from generative_recommenders.research.rails.similarities.module import SimilarityModule


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        variance = x.float().pow(2).mean(-1, keepdim=True)
        x_normed = x.float() * torch.rsqrt(variance + self.eps)
        return (x_normed * self.weight.float()).type_as(x)


class SwiGLUFeedForward(torch.nn.Module):
    def __init__(self, dim: int, hidden_dim: int, dropout_rate: float) -> None:
        super().__init__()
        self.w12 = torch.nn.Linear(dim, 2 * hidden_dim, bias=False)
        self.w3 = torch.nn.Linear(hidden_dim, dim, bias=False)
        self.dropout = torch.nn.Dropout(p=dropout_rate)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x1, x2 = self.w12(x).chunk(2, dim=-1)
        return self.dropout(self.w3(F.silu(x1) * x2))


class CausalSelfAttention(torch.nn.Module):
    def __init__(
        self,
        embedding_dim: int,
        num_heads: int,
        dropout_rate: float,
        attn_impl: str = "sdpa",
    ) -> None:
        super().__init__()
        assert embedding_dim % num_heads == 0
        self._num_heads = num_heads
        self._head_dim = embedding_dim // num_heads
        self._dropout_rate = dropout_rate
        self._attn_impl = attn_impl
        self.qkv = torch.nn.Linear(embedding_dim, 3 * embedding_dim)
        self.out = torch.nn.Linear(embedding_dim, embedding_dim)

    def forward_padded(
        self, x: torch.Tensor, key_padding_mask: torch.Tensor
    ) -> torch.Tensor:
        """x: [B, N, D]; key_padding_mask: [B, N] bool, True = valid."""
        B, N, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=-1)
        q = q.view(B, N, self._num_heads, self._head_dim).transpose(1, 2)
        k = k.view(B, N, self._num_heads, self._head_dim).transpose(1, 2)
        v = v.view(B, N, self._num_heads, self._head_dim).transpose(1, 2)
        causal = torch.ones((N, N), dtype=torch.bool, device=x.device).tril()
        attn_mask = causal.view(1, 1, N, N) & key_padding_mask.view(B, 1, 1, N)
        # "sdpa_flash" forces the FlashAttention backend; the math fallback
        # OOMs at N=200, B=1024 on 40GB cards
        sdp_ctx = (
            torch.backends.cuda.sdp_kernel(
                enable_flash=True, enable_math=False, enable_mem_efficient=True
            )
            if self._attn_impl == "sdpa_flash"
            else contextlib.nullcontext()
        )
        with sdp_ctx:
            o = F.scaled_dot_product_attention(
                q,
                k,
                v,
                attn_mask=attn_mask,
                dropout_p=self._dropout_rate if self.training else 0.0,
            )
        o = o.transpose(1, 2).reshape(B, N, D)
        return self.out(o)

    def forward_jagged(
        self,
        x: torch.Tensor,
        cu_seqlens: torch.Tensor,
        max_seqlen: int,
    ) -> torch.Tensor:
        """x: [L, D] jagged values; cu_seqlens: [B + 1] int32."""
        L, D = x.shape
        q, k, v = self.qkv(x).split(D, dim=-1)
        q = q.view(L, self._num_heads, self._head_dim)
        k = k.view(L, self._num_heads, self._head_dim)
        v = v.view(L, self._num_heads, self._head_dim)
        o = flash_attn_varlen_func(
            q,
            k,
            v,
            cu_seqlens_q=cu_seqlens,
            cu_seqlens_k=cu_seqlens,
            max_seqlen_q=max_seqlen,
            max_seqlen_k=max_seqlen,
            dropout_p=self._dropout_rate if self.training else 0.0,
            softmax_scale=1.0 / math.sqrt(self._head_dim),
            causal=True,
        )
        return self.out(o.reshape(L, D))


class SASRecBlock(torch.nn.Module):
    def __init__(
        self,
        embedding_dim: int,
        ffn_hidden_dim: int,
        num_heads: int,
        dropout_rate: float,
        attn_impl: str,
        ffn_type: str = "swiglu",
    ) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(embedding_dim)
        self.attn = CausalSelfAttention(embedding_dim, num_heads, dropout_rate, attn_impl)
        self.ffn_norm = RMSNorm(embedding_dim)
        if ffn_type == "swiglu":
            self.ffn: torch.nn.Module = SwiGLUFeedForward(
                embedding_dim, ffn_hidden_dim, dropout_rate
            )
        else:
            self.ffn = torch.nn.Sequential(
                torch.nn.Linear(embedding_dim, ffn_hidden_dim),
                torch.nn.GELU(),
                torch.nn.Dropout(dropout_rate),
                torch.nn.Linear(ffn_hidden_dim, embedding_dim),
            )
        self.dropout = torch.nn.Dropout(dropout_rate)


class SASRec(SequentialEncoderWithLearnedSimilarityModule):
    def __init__(
        self,
        max_sequence_len: int,
        max_output_len: int,
        embedding_dim: int,
        num_blocks: int,
        num_heads: int,
        ffn_hidden_dim: int,
        ffn_activation_fn: str,
        ffn_dropout_rate: float,
        embedding_module: EmbeddingModule,
        similarity_module: SimilarityModule,
        input_features_preproc_module: InputFeaturesPreprocessorModule,
        output_postproc_module: OutputPostprocessorModule,
        attn_impl: str = "flash",
        activation_checkpoint: bool = False,
        verbose: bool = False,
    ) -> None:
        super().__init__(ndp_module=similarity_module)

        self._embedding_module: EmbeddingModule = embedding_module
        self._embedding_dim: int = embedding_dim
        self._item_embedding_dim: int = embedding_module.item_embedding_dim
        self._max_sequence_length: int = max_sequence_len + max_output_len
        self._input_features_preproc: InputFeaturesPreprocessorModule = (
            input_features_preproc_module
        )
        self._output_postproc: OutputPostprocessorModule = output_postproc_module
        self._activation_checkpoint: bool = activation_checkpoint
        self._verbose: bool = verbose
        self._num_blocks = num_blocks
        self._num_heads = num_heads
        self._ffn_hidden_dim = ffn_hidden_dim
        self._ffn_activation_fn = ffn_activation_fn
        self._ffn_dropout_rate = ffn_dropout_rate
        self._attn_impl = attn_impl

        self.blocks = torch.nn.ModuleList(
            [
                SASRecBlock(
                    embedding_dim,
                    ffn_hidden_dim,
                    num_heads,
                    ffn_dropout_rate,
                    attn_impl,
                    ffn_type="swiglu" if ffn_activation_fn == "swiglu" else "mlp",
                )
                for _ in range(num_blocks)
            ]
        )
        self.final_norm = RMSNorm(embedding_dim)

    def debug_str(self) -> str:
        return (
            f"SASRec-d{self._item_embedding_dim}-b{self._num_blocks}-h{self._num_heads}"
            + "-"
            + self._ffn_activation_fn
            + f"-ffn{self._ffn_hidden_dim}-d{self._ffn_dropout_rate}-{self._attn_impl}"
            + f"{'-ac' if self._activation_checkpoint else ''}"
        )

    def get_item_embeddings(self, item_ids: torch.Tensor) -> torch.Tensor:
        return self._embedding_module.get_item_embeddings(item_ids)

    def _run_block(
        self,
        block: SASRecBlock,
        x: torch.Tensor,
        valid_mask: torch.Tensor,
        cu_seqlens: Optional[torch.Tensor],
        max_seqlen: int,
    ) -> torch.Tensor:
        if self._attn_impl == "flash":
            assert cu_seqlens is not None
            B, N, D = x.shape
            flat_mask = valid_mask.view(-1)
            jagged = x.view(B * N, D)[flat_mask]
            attn_out = block.attn.forward_jagged(
                block.attn_norm(jagged), cu_seqlens, max_seqlen
            )
            padded = torch.zeros_like(x).view(B * N, D)
            padded[flat_mask] = attn_out.to(padded.dtype)
            x = x + block.dropout(padded.view(B, N, D))
        else:
            x = x + block.dropout(block.attn.forward_padded(block.attn_norm(x), valid_mask))
        x = x + block.ffn(block.ffn_norm(x))
        return x * valid_mask.unsqueeze(-1)

    def generate_user_embeddings(
        self,
        past_lengths: torch.Tensor,
        past_ids: torch.Tensor,
        past_embeddings: torch.Tensor,
        past_payloads: Dict[str, torch.Tensor],
    ) -> torch.Tensor:
        """
        Args:
            past_ids: [B, N] x int64 where the latest engaged ids come first. In
                particular, [:, 0] should correspond to the last engaged values.
            past_ratings: [B, N] x int64.
            past_timestamps: [B, N] x int64.

        Returns:
            encoded_embeddings of [B, N, D].
        """
        past_lengths, user_embeddings, valid_mask = self._input_features_preproc(
            past_lengths=past_lengths,
            past_ids=past_ids,
            past_embeddings=past_embeddings,
            past_payloads=past_payloads,
        )
        valid_mask_b = valid_mask.squeeze(-1).bool()
        cu_seqlens = None
        max_seqlen = user_embeddings.size(1)
        if self._attn_impl == "flash":
            cu_seqlens = F.pad(
                torch.cumsum(past_lengths, dim=0, dtype=torch.int32), (1, 0)
            )
        for block in self.blocks:
            if self._activation_checkpoint and self.training:
                user_embeddings = torch.utils.checkpoint.checkpoint(
                    self._run_block,
                    block,
                    user_embeddings,
                    valid_mask_b,
                    cu_seqlens,
                    max_seqlen,
                    use_reentrant=False,
                )
            else:
                user_embeddings = self._run_block(
                    block, user_embeddings, valid_mask_b, cu_seqlens, max_seqlen
                )
        return self._output_postproc(self.final_norm(user_embeddings))

    def forward(
        self,
        past_lengths: torch.Tensor,
        past_ids: torch.Tensor,
        past_embeddings: torch.Tensor,
        past_payloads: Dict[str, torch.Tensor],
        batch_id: Optional[int] = None,
    ) -> torch.Tensor:
        return self.generate_user_embeddings(
            past_lengths=past_lengths,
            past_ids=past_ids,
            past_embeddings=past_embeddings,
            past_payloads=past_payloads,
        )

    def encode(
        self,
        past_lengths: torch.Tensor,
        past_ids: torch.Tensor,
        past_embeddings: torch.Tensor,
        past_payloads: Dict[str, torch.Tensor],
    ) -> torch.Tensor:
        encoded_seq_embeddings = self.generate_user_embeddings(
            past_lengths, past_ids, past_embeddings, past_payloads
        )  # [B, N, D]
        return get_current_embeddings(
            lengths=past_lengths, encoded_embeddings=encoded_seq_embeddings
        )

    def predict(
        self,
        past_ids: torch.Tensor,
        past_ratings: torch.Tensor,
        past_timestamps: torch.Tensor,
        next_timestamps: torch.Tensor,
        target_ids: torch.Tensor,
        batch_id: Optional[int] = None,
    ) -> Tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError("use encode() + a TopKModule for retrieval")
