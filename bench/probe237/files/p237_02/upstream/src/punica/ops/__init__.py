"""Python bindings for punica CUDA kernels.

All functions here operate on CUDA tensors and dispatch into the compiled
extension ``punica.ops._kernels``.  Shapes follow the convention used in the
paper: ``B`` is the batch size, ``h_in``/``h_out`` the hidden sizes and ``r``
the LoRA rank.
"""
from typing import Optional

import torch

import punica.ops._kernels as _kernels
from punica.utils.kvcache import BatchedKvCache

__all__ = [
    "bgmv",
    "sgmv",
    "add_lora_bgmv",
    "add_lora_sgmv_cutlass",
    "add_lora_sgmv_custom_cutlass",
    "rms_norm",
    "BatchPrefillWithPagedKVCache",
    "batch_decode",
    "init_kv",
    "append_kv",
]


def _check_cuda(*tensors: torch.Tensor):
    for t in tensors:
        if not t.is_cuda:
            raise ValueError(f"expected a CUDA tensor, got device {t.device}")


def bgmv(
    y: torch.Tensor,
    x: torch.Tensor,
    w_T_all: torch.Tensor,
    indicies: torch.LongTensor,
    layer_idx: int,
    scale: float,
):
    """
    Semantics:
      y[i] += (
          x[i].unsqueeze(0)
          @ w_T_all[indices[i], layer_idx, :, :].transpose(-1, -2)
          * scale
        ).squeeze(0)

    Args:
      y: Shape: `[B, H2]`. Output vectors. Will be changed in-place.
      x: Shape: `[B, H1]`. Input vectors.
      w_T_all: Shape: `[None, L, H2, H1]`. All of the transposed weight matrices.
      indicies: Shape: `[B]`. Indices of the weight matrices.
      layer_idx: Layer index of the weight matrices.
      scale: Scaling factor.
    """
    _check_cuda(y, x, w_T_all, indicies)
    f = _kernels.dispatch_bgmv
    f(y, x, w_T_all, indicies, layer_idx, scale)


def sgmv(
    y: torch.Tensor,
    x: torch.Tensor,
    w_ptr: torch.Tensor,
    s: torch.IntTensor,
    layer_idx: int,
):
    """
    Segmented gather matrix-vector product (shrink or expand, chosen by the
    relative sizes of ``x`` and ``y``).

    Args:
      y: Shape: `[B, H2]`. Output vectors. Will be changed in-place.
      x: Shape: `[B, H1]`. Input vectors.
      w_ptr: Shape: `[S]`. DType: torch.int64. Weight matrix pointers.
        Weight matrix shape: `[num_layers, H1, H2]`.
      s: Shape: `[S+1]`, DType: torch.int32. Indptr of the weight matrices.
        `s[0] == 0`, `s[-1] == B`.
      layer_idx: Layer index of the weight matrices.
    """
    tmp_size = _kernels.sgmv_cutlass_tmp_size(w_ptr.size(0))
    tmp = torch.empty((tmp_size,), dtype=torch.uint8, device=x.device)
    _kernels.sgmv_cutlass(y, x, w_ptr, s, tmp, layer_idx)


def add_lora_bgmv(
    y: torch.Tensor,
    x: torch.Tensor,
    wa_T_all: torch.Tensor,
    wb_T_all: torch.Tensor,
    indicies: torch.LongTensor,
    layer_idx: int,
    scale: float,
):
    """
    Semantics:
      y[i] += (
          x[i].unsqueeze(0)
          @ wa_T_all[indices[i], layer_idx, :, :].transpose(-1, -2)
          @ wb_T_all[indices[i], layer_idx, :, :].transpose(-1, -2)
          * scale
        ).squeeze(0)

    Args:
      y: Shape: `[B, H2]`. Output vectors. Will be changed in-place.
      x: Shape: `[B, H1]`. Input vectors.
      wa_T_all: Shape: `[None, L, R, H1]`. All of the transposed LoRA A matrices.
      wb_T_all: Shape: `[None, L, H2, R]`. All of the transposed LoRA B matrices.
      indicies: Shape: `[B]`. Indices of the LoRA weights.
      layer_idx: Layer index of LoRA weights.
      scale: Scaling factor.
    """
    r = wb_T_all.size(-1)
    v = torch.zeros((x.size(0), r), dtype=x.dtype, device=x.device)
    _kernels.dispatch_bgmv(v, x, wa_T_all, indicies, layer_idx, 1.0)
    _kernels.dispatch_bgmv(y, v, wb_T_all, indicies, layer_idx, scale)


def add_lora_sgmv_cutlass(
    y: torch.Tensor,
    x: torch.Tensor,
    wa_ptr: torch.Tensor,
    wb_ptr: torch.Tensor,
    s: torch.IntTensor,
    layer_idx: int,
    lora_rank: int,
):
    """
    Semantics:
      y[s[i]:s[i+1]] += x[s[i]:s[i+1]] @ deref(wa_ptr[i]) @ deref(wb_ptr[i])

    Args:
      y: Shape: `[B, H2]`. Output vectors. Will be changed in-place.
      x: Shape: `[B, H1]`. Input vectors.
      wa_ptr: Shape: `[S]`. DType: torch.int64. Pointer to the weight matrices.
        Weight matrix shape: `[num_layers, H1, R]`.
      wb_ptr: Shape: `[S]`. DType: torch.int64. Pointer to the weight matrices.
        Weight matrix shape: `[num_layers, R, H2]`.
      s: Shape: `[S+1]`, DType: torch.int32. Indptr of the weight matrices.
        `s[0] == 0`, `s[-1] == B`.
      layer_idx: Layer index of the weight matrices.
    """
    tmp_size = _kernels.sgmv_cutlass_tmp_size(wa_ptr.size(0))
    tmp = torch.empty((tmp_size,), dtype=torch.uint8, device=x.device)
    v = torch.zeros((x.size(0), lora_rank), dtype=x.dtype, device=x.device)
    _kernels.sgmv_cutlass(v, x, wa_ptr, s, tmp, layer_idx)
    _kernels.sgmv_cutlass(y, v, wb_ptr, s, tmp, layer_idx)


def add_lora_sgmv_custom_cutlass(
    y: torch.Tensor,
    x: torch.Tensor,
    wa_ptr: torch.Tensor,
    wb_ptr: torch.Tensor,
    s: torch.IntTensor,
    layer_idx: int,
    lora_rank: int,
):
    """
    Same semantics as :func:`add_lora_sgmv_cutlass`, but the shrink step uses
    the hand-written flashinfer-style kernel which is faster for small ranks.

    Args:
      y: Shape: `[B, H2]`. Output vectors. Will be changed in-place.
      x: Shape: `[B, H1]`. Input vectors.
      wa_ptr: Shape: `[S]`. DType: torch.int64. Pointer to the weight matrices.
        Weight matrix shape: `[num_layers, R, H1]`.
      wb_ptr: Shape: `[S]`. DType: torch.int64. Pointer to the weight matrices.
        Weight matrix shape: `[num_layers, R, H2]`.
      s: Shape: `[S+1]`, DType: torch.int32. Indptr of the weight matrices.
        `s[0] == 0`, `s[-1] == B`.
      layer_idx: Layer index of the weight matrices.
    """
    tmp1 = torch.empty((8 * 1024 * 1024,), dtype=torch.uint8, device=x.device)
    tmp2_size = _kernels.sgmv_cutlass_tmp_size(wa_ptr.size(0))
    tmp2 = torch.empty((tmp2_size,), dtype=torch.uint8, device=x.device)
    v = torch.zeros((x.size(0), lora_rank), dtype=x.dtype, device=x.device)
    _kernels.sgmv_shrink(v, x, wa_ptr, s, tmp1, layer_idx)
    _kernels.sgmv_cutlass(y, v, wb_ptr, s, tmp2, layer_idx)


def rms_norm(
    x: torch.Tensor,
    weight: torch.Tensor,
    eps: float = 1e-6,
) -> torch.Tensor:
    o = torch.empty_like(x)
    _kernels.rms_norm(o, x, weight, eps)
    return o


class BatchPrefillWithPagedKVCache:
    """Thin wrapper around the flashinfer batch-prefill handler.

    ``begin_forward`` plans the work partition for the current batch; it must
    be called once per step before any layer runs ``forward``.
    """

    def __init__(self, workspace_buffer: torch.Tensor, kv_layout: str = "NHD"):
        self._workspace = workspace_buffer
        self._kv_layout = kv_layout
        self._wrapper = _kernels.BatchPrefillWithPagedKVCachePyTorchWrapper(
            _kernels.QKVLayout.NHD if kv_layout == "NHD" else _kernels.QKVLayout.HND
        )
        self._qo_indptr: Optional[torch.Tensor] = None

    def begin_forward(
        self,
        qo_indptr: torch.Tensor,
        batch_size: int,
        num_qo_heads: int,
        num_kv_heads: int,
    ):
        self._qo_indptr = qo_indptr
        self._wrapper.begin_forward(
            self._workspace, qo_indptr, batch_size, num_qo_heads, num_kv_heads
        )

    def end_forward(self):
        self._qo_indptr = None
        self._wrapper.end_forward()

    def forward(
        self,
        q: torch.Tensor,
        kv: BatchedKvCache,
        layer_idx: int,
        causal: bool = True,
        rope_scale: float = 1.0,
        rope_theta: float = 1e4,
    ) -> torch.Tensor:
        assert self._qo_indptr is not None, "call begin_forward() first"
        return self._wrapper.forward(
            q,
            self._qo_indptr,
            kv.data,
            kv.indptr,
            kv.indicies,
            kv.last_page_offset,
            layer_idx,
            causal,
            1,  # rotary mode: llama
            rope_scale,
            rope_theta,
        )


def batch_decode(
    q: torch.Tensor,
    kv: BatchedKvCache,
    layer_idx: int,
) -> torch.Tensor:
    """Single-token decode attention over a paged KV cache.

    Args:
      q: Shape: `[B, num_heads, head_dim]`.
    Returns:
      Shape: `[B, num_heads, head_dim]`.
    """
    _check_cuda(q)
    b, n_qo_heads, head_dim = q.shape
    o = torch.empty((b, n_qo_heads, head_dim), dtype=q.dtype, device=q.device)
    tmp = torch.empty((16 * 1024 * 1024,), dtype=torch.uint8, device=q.device)
    _kernels.batch_decode(
        o,
        q,
        kv.data,
        kv.indptr,
        kv.indicies,
        kv.last_page_offset,
        tmp,
        layer_idx,
        1,  # rotary mode: llama
        1.0,
        1e4,
    )
    return o


def init_kv(
    kv: BatchedKvCache,
    k: torch.Tensor,
    v: torch.Tensor,
    seqlen_indptr: torch.Tensor,
    layer_idx: int,
):
    """Write the prompt keys/values (``[sum(seqlen), num_kv_heads, head_dim]``)
    into freshly allocated pages."""
    _kernels.init_kv(
        kv.data,
        kv.indptr,
        kv.indicies,
        kv.last_page_offset,
        k,
        v,
        seqlen_indptr,
        layer_idx,
    )


def append_kv(
    kv: BatchedKvCache,
    k: torch.Tensor,
    v: torch.Tensor,
    layer_idx: int,
):
    """Append one decode step of keys/values (``[B, num_kv_heads, head_dim]``)."""
    _kernels.append_kv(
        kv.data,
        kv.indptr,
        kv.indicies,
        kv.last_page_offset,
        k,
        v,
        layer_idx,
    )
