"""Feature-interaction ops backed by the compiled `ctr_ops._C` extension.

* `fm_interaction(emb)`       0.5 * ((sum_f v_f)^2 - sum_f v_f^2), the FM / DeepFM second-order term
* `dot_interaction(dense, emb)` DLRM pairwise dot products (strictly lower triangle), concatenated with
                                 the dense vector
* `FusedFM` / `DotInteraction`  nn.Module wrappers used by models/deepfm.py and models/dlrm.py

The kernels keep the reductions in fp32 even for half inputs, which is why `custom_fwd` casts the input
up before handing it to the extension under autocast.
"""
from typing import Tuple

import torch
import torch.nn as nn

from ctr_ops import _C  # built by setup.py (CUDAExtension)

__all__ = ["fm_interaction", "dot_interaction", "FusedFM", "DotInteraction", "reference_fm", "reference_dot"]


def reference_fm(emb: torch.Tensor) -> torch.Tensor:
    square_of_sum = emb.sum(dim=1).pow(2)
    sum_of_square = emb.pow(2).sum(dim=1)
    return 0.5 * (square_of_sum - sum_of_square).sum(dim=1, keepdim=True)


def reference_dot(dense: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
    B, F, D = emb.shape
    feats = torch.cat([dense.unsqueeze(1), emb], dim=1)  # (B, F+1, D)
    z = torch.bmm(feats, feats.transpose(1, 2))
    li, lj = torch.tril_indices(F + 1, F + 1, offset=-1, device=emb.device)
    return torch.cat([dense, z[:, li, lj]], dim=1)


class _FMInteraction(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, emb):
        assert emb.is_cuda, "fm_interaction: the fused kernel only runs on CUDA tensors"
        out, sum_v = _C.fm_interaction_forward(emb.contiguous())
        ctx.save_for_backward(emb, sum_v)
        return out

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad_out):
        emb, sum_v = ctx.saved_tensors
        grad_emb = _C.fm_interaction_backward(grad_out.contiguous(), emb, sum_v)
        return grad_emb


class _DotInteraction(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd
    def forward(ctx, dense, emb):
        feats = torch.cat([dense.unsqueeze(1), emb], dim=1).contiguous()
        out = _C.dot_interaction_forward(feats)
        ctx.save_for_backward(feats)
        ctx.dense_dim = dense.shape[1]
        return torch.cat([dense, out], dim=1)

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad_out):
        (feats,) = ctx.saved_tensors
        grad_dense_direct = grad_out[:, : ctx.dense_dim]
        grad_pairs = grad_out[:, ctx.dense_dim:].contiguous()
        grad_feats = _C.dot_interaction_backward(grad_pairs, feats)
        grad_dense = grad_feats[:, 0] + grad_dense_direct
        grad_emb = grad_feats[:, 1:]
        return grad_dense, grad_emb


def fm_interaction(emb: torch.Tensor) -> torch.Tensor:
    """(B, F, D) -> (B, 1)"""
    if emb.dim() != 3:
        raise ValueError(f"fm_interaction expects (B, F, D), got {tuple(emb.shape)}")
    return _FMInteraction.apply(emb)


def dot_interaction(dense: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
    """dense (B, D), emb (B, F, D) -> (B, D + (F+1)F/2)"""
    if dense.dim() != 2 or emb.dim() != 3 or dense.shape[1] != emb.shape[2]:
        raise ValueError("dot_interaction expects dense (B, D) and emb (B, F, D) with the same D")
    if not emb.is_cuda:
        return reference_dot(dense, emb)
    return _DotInteraction.apply(dense, emb)


class FusedFM(nn.Module):
    def __init__(self, reduce_sum: bool = True):
        super().__init__()
        self.reduce_sum = reduce_sum

    def forward(self, emb: torch.Tensor) -> torch.Tensor:
        if not self.reduce_sum:
            square_of_sum = emb.sum(dim=1).pow(2)
            sum_of_square = emb.pow(2).sum(dim=1)
            return 0.5 * (square_of_sum - sum_of_square)
        return fm_interaction(emb)


class DotInteraction(nn.Module):
    def __init__(self, num_sparse: int, embed_dim: int, self_interaction: bool = False):
        super().__init__()
        self.num_sparse = num_sparse
        self.embed_dim = embed_dim
        if self_interaction:
            raise NotImplementedError("self_interaction is only available in reference_dot")

    @property
    def output_dim(self) -> int:
        n = self.num_sparse + 1
        return self.embed_dim + n * (n - 1) // 2

    def forward(self, dense: torch.Tensor, emb: torch.Tensor) -> torch.Tensor:
        return dot_interaction(dense, emb)


def _self_check(batch: int = 512, fields: int = 26, dim: int = 16) -> Tuple[float, float]:
    """Max abs error of the fused ops against the torch reference (run after building the extension)."""
    emb = torch.randn(batch, fields, dim, device="cuda")
    dense = torch.randn(batch, dim, device="cuda")
    err_fm = (fm_interaction(emb) - reference_fm(emb)).abs().max().item()
    err_dot = (dot_interaction(dense, emb) - reference_dot(dense, emb)).abs().max().item()
    return err_fm, err_dot
