#  Copyright (c) Prior Labs GmbH 2025.

from __future__ import annotations

import math
from functools import partial
from typing import TYPE_CHECKING
from typing_extensions import override

import torch
from torch.utils.checkpoint import checkpoint

from tabpfn.model.memory import support_save_peak_mem_factor

if TYPE_CHECKING:
    from tabpfn.model.config import ModelConfig

try:
    from torch.nn.attention import SDPBackend, sdpa_kernel  # torch >= 2.3

    _HAS_SDPA_KERNEL_CTX = True
except ImportError:  # pragma: no cover - older torch
    _HAS_SDPA_KERNEL_CTX = False

TORCH_2_ATTENTION_POSSIBLE = int(torch.__version__.split(".")[0]) >= 2


def _gpu_supports_flash_attention() -> bool:
    """Flash attention kernels need sm80+ (A100/H100/RTX 30xx and newer)."""
    if not torch.cuda.is_available():
        return False
    major, _ = torch.cuda.get_device_capability()
    return major >= 8


class MultiHeadAttention(torch.nn.Module):
    _input_size: int
    _output_size: int
    _nhead: int
    _nhead_kv: int
    _d_k: int
    _d_v: int
    _share_kv_across_n_heads: int
    dropout_p: float | None
    softmax_scale: float | None
    _k_cache: torch.Tensor | None
    _v_cache: torch.Tensor | None
    _kv_cache: torch.Tensor | None
    _w_q: torch.nn.Parameter | None
    _w_k: torch.nn.Parameter | None
    _w_v: torch.nn.Parameter | None
    _w_kv: torch.nn.Parameter | None
    _w_qkv: torch.nn.Parameter | None
    _w_out: torch.nn.Parameter

    def __init__(  # noqa: PLR0913
        self,
        *,
        input_size: int,
        output_size: int,
        d_k: int,
        d_v: int,
        nhead: int,
        config: ModelConfig,
        share_kv_across_n_heads: int = 1,
        dropout_p: float | None = None,
        softmax_scale: float | None = None,
        initialize_output_to_zero: bool = False,
        recompute: bool = False,
        init_gain: float = 1.0,
        device: torch.device | None = None,
        dtype: torch.dtype | None = None,
    ):
        super().__init__()
        assert nhead % share_kv_across_n_heads == 0
        self._input_size = input_size
        self._output_size = output_size
        self._d_k = d_k
        self._d_v = d_v
        self._nhead = nhead
        self._nhead_kv = nhead // share_kv_across_n_heads
        self._device = device
        self._dtype = dtype
        self.dropout_p = dropout_p
        self.softmax_scale = softmax_scale
        self.recompute = recompute
        self.init_gain = init_gain
        self._k_cache = None
        self._v_cache = None
        self._kv_cache = None

        w_out = torch.nn.Parameter(
            torch.empty(nhead, d_v, output_size, device=device, dtype=dtype),
        )
        if initialize_output_to_zero:
            torch.nn.init.zeros_(w_out)
        else:
            torch.nn.init.xavier_uniform_(w_out)
        self._w_out = w_out

        if d_k == d_v and self._nhead == self._nhead_kv:
            w_qkv = torch.nn.Parameter(
                torch.empty(3, self._nhead, self._d_k, self._input_size, device=device, dtype=dtype),
            )
            self.register_parameter("_w_qkv", w_qkv)
            self._w_q = self._w_k = self._w_v = self._w_kv = None
        else:
            self._w_q = torch.nn.Parameter(
                torch.empty(1, nhead, d_k, input_size, device=device, dtype=dtype),
            )
            self._w_kv = torch.nn.Parameter(
                torch.empty(2, self._nhead_kv, d_k, input_size, device=device, dtype=dtype),
            )
            self._w_qkv = self._w_k = self._w_v = None
        self.reset_parameters()

        if recompute:
            self.forward = partial(checkpoint, self.forward, use_reentrant=False)  # type: ignore

    def reset_parameters(self) -> None:
        nhead_total = 3 if self._w_qkv is not None else 1
        std = math.sqrt(2.0 / float(nhead_total * self._nhead * self._d_k + self._input_size)) * self.init_gain
        a = math.sqrt(3.0) * std
        for w in (self._w_qkv, self._w_q, self._w_kv):
            if w is not None:
                torch.nn.init.uniform_(w, -a, a)

    def empty_kv_cache(self) -> None:
        self._k_cache = None
        self._v_cache = None
        self._kv_cache = None

    @override
    def forward(
        self,
        x: torch.Tensor,
        x_kv: torch.Tensor | None = None,
        *,
        cache_kv: bool = False,
        use_cached_kv: bool = False,
        reuse_first_head_kv: bool = False,
        only_cache_first_head_kv: bool = False,
        save_peak_mem_factor: int | None = None,
        add_input: bool = False,
        allow_inplace: bool = False,
    ) -> torch.Tensor:
        """X is the current hidden and has a shape of [batch, ..., seq_len, input_size].
        If keys and values are present in the cache and 'freeze_kv' is not set, they
        are obtained from there and 'x_kv' has to be None.
        Else, if 'x_kv' is not None, keys and values are obtained by applying the
        respective linear transformations to 'x_kv'.
        Else, keys and values are attained by applying the respective linear
        transformations to 'x' (self attention).
        """
        x, x_kv, x_shape_after_transpose = self._rearrange_inputs_to_flat_batch(x, x_kv)

        q, k, v, kv, qkv = self.compute_qkv(
            x, x_kv,
            cache_kv=cache_kv,
            use_cached_kv=use_cached_kv,
            reuse_first_head_kv=reuse_first_head_kv,
        )
        attention_head_outputs = MultiHeadAttention.compute_attention_heads(
            q, k, v, kv, qkv,
            self.dropout_p if self.training else None,
            self.softmax_scale,
        )
        out = torch.einsum(
            "... h d, h d s -> ... s",
            attention_head_outputs,
            self._w_out,
        )
        if add_input:
            out = out + x
        return out.reshape(x_shape_after_transpose[:-1] + out.shape[-1:])

    def _rearrange_inputs_to_flat_batch(self, x, x_kv):
        x_shape_after_transpose = x.shape
        x = x.reshape(-1, *x.shape[-2:])
        if x_kv is not None:
            x_kv = x_kv.reshape(-1, *x_kv.shape[-2:])
        return x, x_kv, x_shape_after_transpose

    def compute_qkv(self, x, x_kv, *, cache_kv, use_cached_kv, reuse_first_head_kv):
        assert not (cache_kv and use_cached_kv), "cannot cache and use cached kv at the same time"
        k = v = kv = qkv = None
        if use_cached_kv:
            assert self._k_cache is not None or self._kv_cache is not None
            q = torch.einsum("... s, j h d s -> ... j h d", x, self._w_q if self._w_q is not None else self._w_qkv[:1])
            kv = self._kv_cache
            k, v = self._k_cache, self._v_cache
            return q.squeeze(-3), k, v, kv, qkv
        if self._w_qkv is not None and x_kv is None:
            qkv = torch.einsum("... s, j h d s -> ... j h d", x, self._w_qkv)
            q = None
        else:
            x_kv = x if x_kv is None else x_kv
            q = torch.einsum("... s, j h d s -> ... j h d", x, self._w_q).squeeze(-3)
            kv = torch.einsum("... s, j h d s -> ... j h d", x_kv, self._w_kv)
        if cache_kv:
            self._kv_cache = kv if kv is not None else qkv[..., 1:, :, :]
        return q, k, v, kv, qkv

    @staticmethod
    def broadcast_kv_across_heads(kv: torch.Tensor, share_kv_across_n_heads: int) -> torch.Tensor:
        nhead, d = kv.shape[-2:]
        kv = kv[..., None, :].expand(*([-1] * (kv.dim() - 1)), share_kv_across_n_heads, -1)
        return kv.reshape(*kv.shape[:-3], nhead * share_kv_across_n_heads, d)

    @staticmethod
    def compute_attention_heads(  # noqa: C901, PLR0912
        q: torch.Tensor | None,
        k: torch.Tensor | None,
        v: torch.Tensor | None,
        kv: torch.Tensor | None,
        qkv: torch.Tensor | None,
        dropout_p: float | None = None,
        softmax_scale: float | None = None,
    ) -> torch.Tensor:
        assert (k is None) == (v is None)
        assert sum([qkv is None, kv is None, k is None and v is None]) == 2
        assert (qkv is None) != (q is None)

        if qkv is not None:
            q, k, v = qkv.unbind(dim=-3)
        elif kv is not None:
            k, v = kv.unbind(dim=-3)

        assert q is not None
        assert k is not None
        assert v is not None

        batch_size, seqlen_q, nhead, d_k = q.shape
        _, seqlen_kv, nhead_kv, d_v = v.shape
        share_kv_across_n_heads = nhead // nhead_kv
        if dropout_p is None:
            dropout_p = 0.0  # TODO: necessary?

        use_flash_attention = (
            TORCH_2_ATTENTION_POSSIBLE
            and q.is_cuda
            and _gpu_supports_flash_attention()
            and q.dtype in (torch.float16, torch.bfloat16)
            and d_k <= 256
        )

        if TORCH_2_ATTENTION_POSSIBLE:
            k = MultiHeadAttention.broadcast_kv_across_heads(k, share_kv_across_n_heads)
            v = MultiHeadAttention.broadcast_kv_across_heads(v, share_kv_across_n_heads)
            q_t, k_t, v_t = (t.transpose(1, 2) for t in (q, k, v))
            if use_flash_attention and _HAS_SDPA_KERNEL_CTX:
                ctx = sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION])
            else:
                ctx = torch.backends.cuda.sdp_kernel(
                    enable_flash=use_flash_attention,
                    enable_math=True,
                    enable_mem_efficient=True,
                )
            with ctx:
                attention_head_outputs = torch.nn.functional.scaled_dot_product_attention(
                    q_t,
                    k_t,
                    v_t,
                    dropout_p=dropout_p,
                    scale=softmax_scale,
                )
            attention_head_outputs = attention_head_outputs.transpose(1, 2)
        else:
            k = MultiHeadAttention.broadcast_kv_across_heads(k, share_kv_across_n_heads)
            v = MultiHeadAttention.broadcast_kv_across_heads(v, share_kv_across_n_heads)
            logits = torch.einsum("b q h d, b k h d -> b q k h", q, k)
            logits *= (
                torch.sqrt(torch.tensor(1.0 / d_k)).to(k.device)
                if softmax_scale is None
                else softmax_scale
            )
            ps = torch.softmax(logits, dim=2)
            ps = torch.dropout(ps, dropout_p, train=True)
            attention_head_outputs = torch.einsum("b q k h, b k h d -> b q h d", ps, v)

        return attention_head_outputs.reshape(
            batch_size,
            seqlen_q,
            nhead,
            d_v,
        )

    @staticmethod
    def convert_torch_nn_multihead_attention_state_dict(
        state_dict: dict,
        nhead: int,
        *,
        disable_stacked_w_qkv: bool = False,
    ) -> dict:
        in_proj_weight = state_dict["in_proj_weight"]
        out_proj_weight = state_dict["out_proj.weight"]

        embed_dim = in_proj_weight.shape[1]
        assert embed_dim % nhead == 0
        assert in_proj_weight.shape[0] == 3 * embed_dim
        assert out_proj_weight.shape == (embed_dim, embed_dim)
        in_proj_weight = in_proj_weight.reshape(3, nhead, -1, embed_dim)

        state_dict = {}
        if disable_stacked_w_qkv:
            state_dict["_w_q"], state_dict["_w_kv"] = torch.split(
                in_proj_weight,
                [1, 2],
            )
            state_dict["_w_q"] = state_dict["_w_q"].squeeze(0)
        else:
            state_dict["_w_qkv"] = in_proj_weight
        state_dict["_w_out"] = out_proj_weight.T.reshape(nhead, -1, embed_dim)
        return state_dict
