"""Exact AUC / LogLoss / GAUC over a data-parallel evaluation.

Each rank scores its shard of the validation set; predictions and labels are gathered to every rank and
the metrics computed once on the concatenation, so the number matches a single-process evaluation
exactly (no averaging of per-rank AUCs, which is biased).

For very large eval sets (Criteo-1TB day 23 is ~90M rows) `StreamingAUC` keeps a fixed-size histogram of
scores per label instead, which is approximate to ~1e-5 with 2**20 bins, and all-reduces the histograms.
"""
from typing import Dict, List, Optional

import numpy as np
import torch
import torch.distributed as dist
from sklearn.metrics import log_loss, roc_auc_score


def _world() -> int:
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def _comm_device() -> torch.device:
    """NCCL can only move CUDA tensors; gloo wants CPU ones."""
    if dist.is_initialized() and dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def gather_variable(t: torch.Tensor) -> torch.Tensor:
    """all_gather for 1-D tensors whose length differs per rank."""
    if _world() == 1:
        return t
    dev = _comm_device()
    t = t.to(dev)
    n = torch.tensor([t.numel()], dtype=torch.int32, device=dev)
    sizes = [torch.zeros_like(n) for _ in range(_world())]
    dist.all_gather(sizes, n)
    max_n = max(int(s.item()) for s in sizes)
    padded = torch.zeros(max_n, dtype=t.dtype, device=dev)
    padded[: t.numel()] = t
    out = [torch.zeros_like(padded) for _ in range(_world())]
    dist.all_gather(out, padded)
    return torch.cat([o[: int(s.item())] for o, s in zip(out, sizes)])


class GatheredMetrics:
    """Accumulate (pred, label[, group]) on device, compute exact metrics on `compute()`."""

    def __init__(self, with_group: bool = False):
        self.with_group = with_group
        self.reset()

    def reset(self):
        self._preds: List[torch.Tensor] = []
        self._labels: List[torch.Tensor] = []
        self._groups: List[torch.Tensor] = []

    @torch.no_grad()
    def update(self, preds: torch.Tensor, labels: torch.Tensor, groups: Optional[torch.Tensor] = None):
        self._preds.append(preds.detach().float().reshape(-1))
        self._labels.append(labels.detach().float().reshape(-1))
        if self.with_group:
            if groups is None:
                raise ValueError("GatheredMetrics(with_group=True) needs group ids (e.g. user id) for GAUC")
            self._groups.append(groups.detach().reshape(-1).to(torch.int32))

    def compute(self) -> Dict[str, float]:
        preds = gather_variable(torch.cat(self._preds)).cpu().numpy().astype(np.float64)
        labels = gather_variable(torch.cat(self._labels)).cpu().numpy()
        out = {
            "auc": float(roc_auc_score(labels, preds)),
            "logloss": float(log_loss(labels, np.clip(preds, 1e-7, 1 - 1e-7))),
            "n": int(labels.size),
        }
        if self.with_group:
            groups = gather_variable(torch.cat(self._groups)).cpu().numpy()
            out["gauc"] = gauc(labels, preds, groups)
        return out


def gauc(labels: np.ndarray, preds: np.ndarray, groups: np.ndarray) -> float:
    """Impression-weighted per-user AUC (users with a single label class are skipped)."""
    order = np.argsort(groups, kind="stable")
    labels, preds, groups = labels[order], preds[order], groups[order]
    bounds = np.flatnonzero(np.diff(groups)) + 1
    total, weight = 0.0, 0
    for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(groups)]):
        y = labels[lo:hi]
        if y.min() == y.max():
            continue
        total += roc_auc_score(y, preds[lo:hi]) * (hi - lo)
        weight += hi - lo
    return total / max(weight, 1)


class StreamingAUC:
    """Histogram AUC: O(bins) memory, one all_reduce at the end."""

    def __init__(self, num_bins: int = 1 << 20, device: Optional[torch.device] = None):
        self.num_bins = num_bins
        self.device = device or torch.device("cuda")
        self.pos = torch.zeros(num_bins, dtype=torch.float64, device=self.device)
        self.neg = torch.zeros(num_bins, dtype=torch.float64, device=self.device)

    @torch.no_grad()
    def update(self, preds: torch.Tensor, labels: torch.Tensor):
        idx = (preds.detach().float().clamp(0, 1 - 1e-9) * self.num_bins).long().to(self.device)
        lab = labels.detach().reshape(-1).to(self.device)
        self.pos.index_add_(0, idx[lab > 0.5], torch.ones_like(idx[lab > 0.5], dtype=torch.float64))
        self.neg.index_add_(0, idx[lab <= 0.5], torch.ones_like(idx[lab <= 0.5], dtype=torch.float64))

    def compute(self) -> float:
        pos, neg = self.pos.clone(), self.neg.clone()
        if _world() > 1:
            dist.all_reduce(pos)
            dist.all_reduce(neg)
        # sweep thresholds from high to low score: trapezoid rule on the ROC curve
        pos, neg = pos.flip(0), neg.flip(0)
        tp = torch.cumsum(pos, 0)
        fp = torch.cumsum(neg, 0)
        tp_prev = torch.cat([tp.new_zeros(1), tp[:-1]])
        fp_prev = torch.cat([fp.new_zeros(1), fp[:-1]])
        area = ((fp - fp_prev) * (tp + tp_prev) / 2).sum()
        return float(area / (tp[-1] * fp[-1]).clamp_min(1))
