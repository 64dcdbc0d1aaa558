import logging
import os
from typing import Optional, Union

import einops
import einx
import torch
import torch.nn as nn
import torch.nn.functional as F
from huggingface_hub import PyTorchModelHubMixin
from safetensors.torch import load_file

from ..._internal.config.enums import Task
from ..._internal.models.base import BaseModel
from ..._internal.models.embedding import Tab2DEmbeddingX, Tab2DEmbeddingYClasses, Tab2DEmbeddingYRegression, Tab2DQuantileEmbeddingX

logger = logging.getLogger(__name__)

# flash-attn is optional: the varlen kernels let us skip the padded observations
# entirely, which is ~2x faster for ragged support sets on A100/H100.
try:
    from flash_attn.bert_padding import pad_input, unpad_input
    from flash_attn.flash_attn_interface import flash_attn_varlen_func

    FLASH_ATTN_AVAILABLE = True
except ImportError:
    FLASH_ATTN_AVAILABLE = False


def _use_flash_attn(x: torch.Tensor) -> bool:
    return FLASH_ATTN_AVAILABLE and x.is_cuda and os.environ.get("MITRA_DISABLE_FLASH_ATTN", "0") != "1"


class Tab2D(BaseModel, PyTorchModelHubMixin):
    def __init__(
        self,
        dim: int,
        dim_output: int,
        n_layers: int,
        n_heads: int,
        task: Union[str, Task],
        use_pretrained_weights: bool,
        path_to_weights: str,
        device: str = "cuda",
    ) -> None:
        super().__init__()

        self.dim = dim
        self.dim_output = dim_output
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.task = Task[task] if isinstance(task, str) else task
        self.device_type = device

        self.x_quantile = Tab2DQuantileEmbeddingX(dim)
        self.x_embedding = Tab2DEmbeddingX(dim)

        if self.task == Task.CLASSIFICATION:
            self.y_embedding = Tab2DEmbeddingYClasses(dim, dim_output)
        elif self.task == Task.REGRESSION:
            if self.dim_output == 1:
                self.y_embedding = Tab2DEmbeddingYRegression(dim)
            else:
                self.y_embedding = Tab2DEmbeddingYClasses(dim, dim_output)
        else:
            raise ValueError(f"Task {task} not supported")

        self.layers = nn.ModuleList()
        for _ in range(n_layers):
            self.layers.append(Layer(dim, n_heads))

        self.final_layer_norm = nn.LayerNorm(dim)
        self.final_layer = nn.Linear(dim, dim_output, bias=True)

        if use_pretrained_weights:
            if device == "cpu":
                # Loading on CPU requires map_location
                self.load_state_dict(torch.load(path_to_weights, weights_only=True, map_location=torch.device("cpu")))
            else:
                self.load_state_dict(load_file(path_to_weights, device="cuda"))
        else:
            self.init_weights()

    def init_weights(self) -> None:
        nn.init.normal_(self.final_layer.weight, std=0.02)
        nn.init.zeros_(self.final_layer.bias)
        for layer in self.layers:
            layer.init_weights()

    def forward(
        self,
        x_support: torch.Tensor,  # (b, n_s, f)
        y_support: torch.Tensor,  # (b, n_s)
        x_query: torch.Tensor,  # (b, n_q, f)
        padding_features: torch.Tensor,  # (b, f), "1" represents padding, "0" represents valid values
        padding_obs_support: torch.Tensor,  # (b, n_s)
        padding_obs_query__: torch.Tensor,  # (b, n_q)
    ):
        """
        x_support is (batch_size, n_observations_support, n_features)
        y_support is (batch_size, n_observations_support)

        x_query is (batch_size, n_observations_query, n_features)

        returns:

        y_query is (batch_size, n_observations_query, n_classes)

        syntax:
        b = batch size
        s = number of observations
        f = number of features
        d = dimension of embedding
        c = number of classes
        """
        x_query__ = x_query

        batch_size = x_support.shape[0]
        n_obs_support = x_support.shape[1]
        n_obs_query__ = x_query__.shape[1]

        x_support, x_query__ = self.x_quantile(x_support, x_query__, padding_obs_support, padding_features)
        x_support = self.x_embedding(x_support)  # (b, n_s, f, d)
        x_query__ = self.x_embedding(x_query__)  # (b, n_q, f, d)
        y_support, y_query__ = self.y_embedding(y_support, padding_obs_support, n_obs_query__)

        support, pack_support = einops.pack((y_support, x_support), "b s * d")  # (b, n_s, f+1, d)
        query, pack_query = einops.pack((y_query__, x_query__), "b s * d")  # (b, n_q, f+1, d)

        padding_features_y = torch.zeros((batch_size, 1), device=padding_features.device, dtype=torch.bool)  # (b, 1)
        padding_features, _ = einops.pack((padding_features_y, padding_features), "b *")  # (b, f+1)

        if _use_flash_attn(support):
            padder = Padder(support, padding_obs_support, n_obs_query__)
            support = padder.base_to_obs(support)  # (n_valid_s, d)
            query = padder.base_to_obs(query)  # (n_valid_q, d)
            for layer in self.layers:
                support, query = layer(support, query, padder, padding_features)
            query = padder.obs_to_base(query)
        else:
            for layer in self.layers:
                support, query = layer.forward_padded(support, query, padding_obs_support, padding_features)

        query = self.final_layer_norm(query)
        query = self.final_layer(query)  # (b, n_q, f+1, c)
        y_query__, x_query__ = einops.unpack(query, pack_query, "b s * c")  # (b, n_q, c)
        return y_query__.squeeze(2) if self.task == Task.REGRESSION and self.dim_output == 1 else y_query__


class Padder(torch.nn.Module):
    def __init__(self, x: torch.Tensor, padding_mask: torch.Tensor, n_obs_query: int) -> None:
        super().__init__()
        self.padding_mask = padding_mask
        self.n_obs_query = n_obs_query
        batch_size, n_obs, n_feat, dim = x.shape
        self.batch_size = batch_size
        self.n_feat = n_feat
        x_flat = einops.rearrange(x, "b s f d -> b s (f d)")
        _, self.indices_obs, self.cu_seqlens_obs, self.max_seqlen_obs, *_ = unpad_input(x_flat, ~padding_mask)
        self.n_obs = n_obs

    def base_to_obs(self, x: torch.Tensor) -> torch.Tensor:
        x = einops.rearrange(x, "b s f d -> (b s) f d")
        return x[self.indices_obs] if x.shape[0] == self.batch_size * self.n_obs else x

    def obs_to_base(self, x: torch.Tensor) -> torch.Tensor:
        x = einops.rearrange(x, "n f d -> n (f d)")
        x = pad_input(x, self.indices_obs, self.batch_size, self.n_obs_query)
        return einops.rearrange(x, "b s (f d) -> b s f d", f=self.n_feat)


class Layer(torch.nn.Module):
    def __init__(self, dim: int, n_heads: int) -> None:
        super().__init__()
        self.layer_norm1 = nn.LayerNorm(dim)
        self.attention1 = MultiheadAttention(dim, n_heads)
        self.layer_norm2 = nn.LayerNorm(dim)
        self.linear1 = nn.Linear(dim, dim * 4, bias=True)
        self.linear2 = nn.Linear(dim * 4, dim, bias=True)

        self.layer_norm3 = nn.LayerNorm(dim)
        self.attention2 = MultiheadAttention(dim, n_heads)
        self.layer_norm4 = nn.LayerNorm(dim)
        self.linear3 = nn.Linear(dim, dim * 4, bias=True)
        self.linear4 = nn.Linear(dim * 4, dim, bias=True)

    def init_weights(self) -> None:
        for lin in (self.linear2, self.linear4):
            nn.init.zeros_(lin.weight)
            nn.init.zeros_(lin.bias)

    def _ffn_obs(self, x):
        return x + self.linear2(F.gelu(self.linear1(self.layer_norm2(x))))

    def _ffn_feat(self, x):
        return x + self.linear4(F.gelu(self.linear3(self.layer_norm4(x))))

    def forward(self, support, query, padder: Padder, padding_features):
        # attention across observations (varlen flash attention over the unpadded rows)
        n_valid_s = support.shape[0]
        x = torch.cat([support, query], dim=0)  # ((n_valid_s + n_valid_q), f, d)
        x_norm = self.layer_norm1(x)
        q = einops.rearrange(x_norm, "n f d -> n f d")
        att = self.attention1.forward_varlen(
            q, x_norm[:n_valid_s], x_norm[:n_valid_s],
            cu_seqlens_q=padder.cu_seqlens_obs, cu_seqlens_k=padder.cu_seqlens_obs,
            max_seqlen_q=padder.max_seqlen_obs, max_seqlen_k=padder.max_seqlen_obs,
        )
        x = self._ffn_obs(x + att)

        # attention across features (dense, features are never padded per row)
        x_norm = self.layer_norm3(x)
        x = self._ffn_feat(x + self.attention2(x_norm, x_norm, x_norm, key_padding_mask=padding_features))
        return x[:n_valid_s], x[n_valid_s:]

    def forward_padded(self, support, query, padding_obs_support, padding_features):
        b, n_s, f, d = support.shape
        x = torch.cat([support, query], dim=1)
        x_norm = self.layer_norm1(x)
        x_t = einops.rearrange(x_norm, "b s f d -> (b f) s d")
        kv = x_t[:, :n_s]
        mask = einops.repeat(padding_obs_support, "b s -> (b f) s", f=f)
        att = self.attention1(x_t, kv, kv, key_padding_mask=mask)
        att = einops.rearrange(att, "(b f) s d -> b s f d", b=b)
        x = self._ffn_obs(x + att)
        x_norm = self.layer_norm3(x)
        x_f = einops.rearrange(x_norm, "b s f d -> (b s) f d")
        mask_f = einops.repeat(padding_features, "b f -> (b s) f", s=x.shape[1])
        att_f = self.attention2(x_f, x_f, x_f, key_padding_mask=mask_f)
        x = self._ffn_feat(x + einops.rearrange(att_f, "(b s) f d -> b s f d", b=b))
        return x[:, :n_s], x[:, n_s:]


class MultiheadAttention(torch.nn.Module):
    def __init__(self, dim: int, n_heads: int) -> None:
        super().__init__()
        self.dim = dim
        self.n_heads = n_heads
        self.q = nn.Linear(dim, dim, bias=True)
        self.k = nn.Linear(dim, dim, bias=True)
        self.v = nn.Linear(dim, dim, bias=True)
        self.o = nn.Linear(dim, dim, bias=True)

    def forward(self, query, key, value, key_padding_mask: Optional[torch.Tensor] = None):
        q = einops.rearrange(self.q(query), "b n (h d) -> b h n d", h=self.n_heads)
        k = einops.rearrange(self.k(key), "b n (h d) -> b h n d", h=self.n_heads)
        v = einops.rearrange(self.v(value), "b n (h d) -> b h n d", h=self.n_heads)
        attn_mask = None
        if key_padding_mask is not None:
            attn_mask = ~key_padding_mask[:, None, None, :]  # True = attend
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        return self.o(einops.rearrange(out, "b h n d -> b n (h d)"))

    def forward_varlen(self, query, key, value, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k):
        # query/key/value: (total_tokens, f, d) -> treat every feature column as its own head group
        n_tokens, f, d = query.shape
        q = einops.rearrange(self.q(query), "n f (h d) -> (f n) h d", h=self.n_heads)
        k = einops.rearrange(self.k(key), "n f (h d) -> (f n) h d", h=self.n_heads)
        v = einops.rearrange(self.v(value), "n f (h d) -> (f n) h d", h=self.n_heads)
        cu_q = torch.cat([cu_seqlens_q[:-1] + i * cu_seqlens_q[-1] for i in range(f)] + [cu_seqlens_q[-1:] * f])
        cu_k = torch.cat([cu_seqlens_k[:-1] + i * cu_seqlens_k[-1] for i in range(f)] + [cu_seqlens_k[-1:] * f])
        out = flash_attn_varlen_func(
            q.to(torch.bfloat16), k.to(torch.bfloat16), v.to(torch.bfloat16),
            cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
            max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k,
            dropout_p=0.0, causal=False,
        ).to(query.dtype)
        out = einops.rearrange(out, "(f n) h d -> n f (h d)", f=f)
        return self.o(out)
