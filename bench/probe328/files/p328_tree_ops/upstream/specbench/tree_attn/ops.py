"""Backend dispatch for tree attention and accepted-KV compaction.

Preference order: the nvcc-built extension (csrc/, `pip install -e .`), then the Triton
kernels, then the eager PyTorch reference. Override with TREE_ATTN_BACKEND=cuda|triton|torch.
"""
import math
import os

import torch

try:
    import tree_attn_cuda  # built from csrc/tree_attn.cu by setup.py

    HAS_CUDA_EXT = True
except ImportError:
    tree_attn_cuda = None
    HAS_CUDA_EXT = False

from .triton_tree_attention import compact_accepted_kv, tree_attention_ref
from .triton_tree_attention import tree_attention as triton_tree_attention

_BACKEND = os.environ.get("TREE_ATTN_BACKEND", "auto")
_WARNED = set()


def _warn_once(msg):
    if msg not in _WARNED:
        _WARNED.add(msg)
        print(f"[tree_attn] {msg}")


def _pick_backend(q):
    if _BACKEND != "auto":
        return _BACKEND
    if HAS_CUDA_EXT and q.is_cuda:
        return "cuda"
    if q.is_cuda:
        return "triton"
    _warn_once(f"no fused kernel for device {q.device}, using the eager reference")
    return "torch"


def tree_attention(q, k, v, tree_mask, n_prefix, sm_scale=None):
    """Attention of N_TREE tree tokens over [prefix | tree] keys; see triton_tree_attention.py."""
    if sm_scale is None:
        sm_scale = 1.0 / math.sqrt(q.shape[-1])
    backend = _pick_backend(q)
    if backend == "cuda":
        out = tree_attn_cuda.fwd(
            q.contiguous(), k.contiguous(), v.contiguous(), tree_mask.to(torch.uint8).contiguous(), n_prefix, sm_scale
        )
        return out
    if backend == "triton":
        return triton_tree_attention(q, k, v, tree_mask, n_prefix, sm_scale)
    return tree_attention_ref(q, k, v, tree_mask, n_prefix, sm_scale)


def update_kv_cache(cache, select_idx, prefix_len):
    """Move the KV rows of the accepted path to [prefix_len, prefix_len + len(select_idx))."""
    if select_idx.numel() == 0:
        return cache
    if HAS_CUDA_EXT and cache.is_cuda:
        tree_attn_cuda.gather_kv_(cache, select_idx.to(torch.int32), prefix_len)
        return cache
    if _BACKEND == "torch":
        src = cache[:, :, prefix_len + select_idx]
        cache[:, :, prefix_len : prefix_len + select_idx.numel()] = src
        return cache
    return compact_accepted_kv(cache, select_idx, prefix_len)


def backend_summary(device=None):
    dev = torch.device(device) if device is not None else None
    lines = [
        f"TREE_ATTN_BACKEND={_BACKEND}",
        f"cuda extension: {'yes' if HAS_CUDA_EXT else 'no'}",
    ]
    if dev is not None:
        probe = torch.empty(1, device=dev)
        lines.append(f"auto backend on {dev}: {_pick_backend(probe)}")
    return "\n".join(lines)
