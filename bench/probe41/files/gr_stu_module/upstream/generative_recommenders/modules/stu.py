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

# pyre-strict

import abc
import logging
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F

from generative_recommenders.common import (
    fx_infer_max_len,
    HammerKernel,
    HammerModule,
    init_mlp_weights_optional_bias,
)
from generative_recommenders.ops.hstu_attention import delta_hstu_mha, hstu_mha
from generative_recommenders.ops.jagged_tensors import concat_2D_jagged
from generative_recommenders.ops.layer_norm import layer_norm

logger: logging.Logger = logging.getLogger(__name__)


@dataclass
class STULayerConfig:
    embedding_dim: int
    num_heads: int
    hidden_dim: int
    attention_dim: int
    output_dropout_ratio: float = 0.3
    causal: bool = True
    target_aware: bool = True
    max_attn_len: Optional[int] = None
    attn_alpha: Optional[float] = None
    use_group_norm: bool = False
    recompute_normed_x: bool = True
    recompute_uvqk: bool = True
    recompute_y: bool = True
    sort_by_length: bool = True
    contextual_seq_len: int = 0


class STU(HammerModule, abc.ABC):
    @abc.abstractmethod
    def forward(
        self,
        x: torch.Tensor,
        x_lengths: torch.Tensor,
        x_offsets: torch.Tensor,
        max_seq_len: int,
        num_targets: torch.Tensor,
        max_kv_caching_len: int = 0,
        kv_caching_lengths: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        pass


class STULayer(STU):
    max_kv_caching_len: int = 0
    k_cache: Optional[torch.Tensor] = None
    v_cache: Optional[torch.Tensor] = None
    kv_caching_offsets: Optional[torch.Tensor] = None

    def __init__(
        self,
        config: STULayerConfig,
        is_inference: bool = False,
    ) -> None:
        super().__init__(
            is_inference=is_inference,
        )
        self.reset_kv_cache()
        self._num_heads: int = config.num_heads
        self._embedding_dim: int = config.embedding_dim
        self._hidden_dim: int = config.hidden_dim
        self._attention_dim: int = config.attention_dim
        self._output_dropout_ratio: float = config.output_dropout_ratio
        self._target_aware: bool = config.target_aware
        self._causal: bool = config.causal
        self._max_attn_len: int = config.max_attn_len or 0
        self._attn_alpha: float = config.attn_alpha or 1.0 / (self._attention_dim**0.5)
        self._use_group_norm: bool = config.use_group_norm
        self._sort_by_length: bool = config.sort_by_length
        self._contextual_seq_len: int = config.contextual_seq_len

        self._uvqk_weight: torch.nn.Parameter = torch.nn.Parameter(
            torch.empty(
                (
                    self._embedding_dim,
                    (self._hidden_dim * 2 + self._attention_dim * 2) * self._num_heads,
                )
            ),
        )
        torch.nn.init.xavier_uniform_(self._uvqk_weight)
        self._uvqk_beta: torch.nn.Parameter = torch.nn.Parameter(
            torch.zeros(
                (self._hidden_dim * 2 + self._attention_dim * 2) * self._num_heads,
            ),
        )
        self._input_norm_weight: torch.nn.Parameter = torch.nn.Parameter(
            torch.ones((self._embedding_dim,)),
        )
        self._input_norm_bias: torch.nn.Parameter = torch.nn.Parameter(
            torch.zeros((self._embedding_dim,)),
        )
        self._output_weight = torch.nn.Parameter(
            torch.empty(
                (
                    self._hidden_dim * self._num_heads * 3,
                    self._embedding_dim,
                )
            ),
        )
        torch.nn.init.xavier_uniform_(self._output_weight)
        output_norm_shape: int = (
            self._hidden_dim * self._num_heads
            if not self._use_group_norm
            else self._num_heads
        )
        self._output_norm_weight: torch.nn.Parameter = torch.nn.Parameter(
            torch.ones((output_norm_shape,)),
        )
        self._output_norm_bias: torch.nn.Parameter = torch.nn.Parameter(
            torch.zeros((output_norm_shape,)),
        )

    def reset_kv_cache(self) -> None:
        self.k_cache = None
        self.v_cache = None
        self.kv_caching_offsets = None
        self.max_kv_caching_len = 0

    def _compute_uvqk(
        self, x: torch.Tensor
    ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        # LayerNorm statistics are kept in fp32 even under bf16 autocast: with
        # long user histories the variance underflows in bf16.
        with torch.autocast("cuda", enabled=False):
            normed_x = layer_norm(
                x.float(),
                weight=self._input_norm_weight.float(),
                bias=self._input_norm_bias.float(),
                eps=1e-6,
                kernel=self.hammer_kernel(),
            ).to(x.dtype)
        uvqk = torch.addmm(self._uvqk_beta.to(x.dtype), normed_x, self._uvqk_weight.to(x.dtype))
        u, v, q, k = torch.split(
            uvqk,
            [
                self._hidden_dim * self._num_heads,
                self._hidden_dim * self._num_heads,
                self._attention_dim * self._num_heads,
                self._attention_dim * self._num_heads,
            ],
            dim=1,
        )
        u = F.silu(u)
        q = q.view(-1, self._num_heads, self._attention_dim)
        k = k.view(-1, self._num_heads, self._attention_dim)
        v = v.view(-1, self._num_heads, self._hidden_dim)
        return u, q, k, v

    def _output(
        self, u: torch.Tensor, attn: torch.Tensor, x: torch.Tensor
    ) -> torch.Tensor:
        attn = attn.reshape(-1, self._hidden_dim * self._num_heads)
        if self._use_group_norm:
            normed = F.group_norm(
                attn.view(-1, self._num_heads, self._hidden_dim),
                num_groups=self._num_heads,
                weight=self._output_norm_weight,
                bias=self._output_norm_bias,
            ).view(-1, self._hidden_dim * self._num_heads)
        else:
            normed = F.layer_norm(
                attn,
                normalized_shape=(self._hidden_dim * self._num_heads,),
                weight=self._output_norm_weight,
                bias=self._output_norm_bias,
                eps=1e-6,
            )
        y = u * normed
        y = torch.cat([u, attn, y], dim=1)
        y = F.dropout(y, p=self._output_dropout_ratio, training=self.training)
        return x + torch.mm(y, self._output_weight.to(y.dtype))

    def forward(
        self,
        x: torch.Tensor,
        x_lengths: torch.Tensor,
        x_offsets: torch.Tensor,
        max_seq_len: int,
        num_targets: torch.Tensor,
        max_kv_caching_len: int = 0,
        kv_caching_lengths: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        torch.cuda.nvtx.range_push("STULayer.forward")
        u, q, k, v = self._compute_uvqk(x)
        if max_kv_caching_len > 0 and self.is_inference:
            self.k_cache = k.detach()
            self.v_cache = v.detach()
            self.kv_caching_offsets = x_offsets
            self.max_kv_caching_len = max_kv_caching_len
        attn_output = hstu_mha(
            max_seq_len=max_seq_len,
            alpha=self._attn_alpha,
            q=q,
            k=k,
            v=v,
            seq_offsets=x_offsets,
            causal=self._causal,
            dropout_pr=0.0,
            training=self.training,
            num_targets=num_targets if self._target_aware else None,
            max_attn_len=self._max_attn_len,
            contextual_seq_len=self._contextual_seq_len,
            sort_by_length=self._sort_by_length,
            kernel=self.hammer_kernel(),
        )
        out = self._output(u, attn_output, x)
        torch.cuda.nvtx.range_pop()
        return out

    def cached_forward(
        self,
        delta_x: torch.Tensor,
        num_targets: torch.Tensor,
        max_kv_caching_len: int = 0,
        kv_caching_lengths: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        assert self.k_cache is not None and self.v_cache is not None
        delta_u, delta_q, delta_k, delta_v = self._compute_uvqk(delta_x)
        B = self.kv_caching_offsets.numel() - 1
        delta_size = delta_x.size(0) // B
        delta_offsets = torch.arange(
            0, (B + 1) * delta_size, delta_size, device=delta_x.device
        )
        k = concat_2D_jagged(
            max_seq_len=self.max_kv_caching_len + delta_size,
            values_left=self.k_cache.flatten(1, 2),
            values_right=delta_k.flatten(1, 2),
            max_len_left=self.max_kv_caching_len,
            max_len_right=delta_size,
            offsets_left=self.kv_caching_offsets,
            offsets_right=delta_offsets,
            kernel=self.hammer_kernel(),
        ).view(-1, self._num_heads, self._attention_dim)
        v = concat_2D_jagged(
            max_seq_len=self.max_kv_caching_len + delta_size,
            values_left=self.v_cache.flatten(1, 2),
            values_right=delta_v.flatten(1, 2),
            max_len_left=self.max_kv_caching_len,
            max_len_right=delta_size,
            offsets_left=self.kv_caching_offsets,
            offsets_right=delta_offsets,
            kernel=self.hammer_kernel(),
        ).view(-1, self._num_heads, self._hidden_dim)
        seq_offsets = self.kv_caching_offsets + delta_offsets
        attn = delta_hstu_mha(
            max_seq_len=self.max_kv_caching_len + delta_size,
            alpha=self._attn_alpha,
            delta_q=delta_q,
            k=k,
            v=v,
            seq_offsets=seq_offsets,
            num_targets=num_targets if self._target_aware else None,
            max_attn_len=self._max_attn_len,
            contextual_seq_len=self._contextual_seq_len,
            kernel=self.hammer_kernel(),
        )
        return self._output(delta_u, attn, delta_x)


class STUStack(STU):
    def __init__(
        self,
        stu_list: List[STU],
        is_inference: bool = False,
    ) -> None:
        super().__init__(is_inference=is_inference)
        self._stu_layers: torch.nn.ModuleList = torch.nn.ModuleList(modules=stu_list)

    def forward(
        self,
        x: torch.Tensor,
        x_lengths: torch.Tensor,
        x_offsets: torch.Tensor,
        max_seq_len: int,
        num_targets: torch.Tensor,
        max_kv_caching_len: int = 0,
        kv_caching_lengths: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        for layer in self._stu_layers:
            x = layer(
                x=x,
                x_lengths=x_lengths,
                x_offsets=x_offsets,
                max_seq_len=max_seq_len,
                num_targets=num_targets,
                max_kv_caching_len=max_kv_caching_len,
                kv_caching_lengths=kv_caching_lengths,
            )
        return x

    def cached_forward(
        self,
        delta_x: torch.Tensor,
        num_targets: torch.Tensor,
        max_kv_caching_len: int = 0,
        kv_caching_lengths: Optional[torch.Tensor] = None,
    ) -> torch.Tensor:
        for layer in self._stu_layers:
            delta_x = layer.cached_forward(  # pyre-ignore [29]
                delta_x=delta_x,
                num_targets=num_targets,
                max_kv_caching_len=max_kv_caching_len,
                kv_caching_lengths=kv_caching_lengths,
            )
        return delta_x


def build_stu_stack(
    num_layers: int, config: STULayerConfig, is_inference: bool = False
) -> STUStack:
    layers: List[STU] = [
        STULayer(config=config, is_inference=is_inference) for _ in range(num_layers)
    ]
    stack = STUStack(stu_list=layers, is_inference=is_inference)
    stack.apply(init_mlp_weights_optional_bias)
    logger.info(f"built STU stack: {num_layers} layers, kernel={stack.hammer_kernel()}")
    return stack
