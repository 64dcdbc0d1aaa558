"""
Collators for sample packing.

Several short samples are concatenated into one row. The model must not attend across sample
boundaries, so the collator emits either `position_ids` that restart at 0 for every sample
(transformers derives `cu_seqlens` from them for flash-attn varlen kernels on the GPU) or the
cumulative sequence lengths themselves.

Everything here runs in DataLoader workers on the CPU; tensors reach the GPU later via the
Trainer's `_prepare_inputs`.
"""

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch

IGNORE_INDEX = -100


def get_cu_seqlens(position_ids: torch.Tensor) -> torch.Tensor:
    """Cumulative sequence lengths (int32, starting with 0) from restarting position ids.

    flash_attn_varlen_func expects cu_seqlens as int32 on the same device as q; we build them on
    the CPU here and let the caller move them with `.to(q.device)`.
    """
    flat = position_ids.flatten()
    starts = torch.nonzero(flat == 0, as_tuple=False).flatten()
    ends = torch.cat([starts[1:], torch.tensor([flat.numel()], dtype=starts.dtype)])
    lengths = ends - starts
    cu = torch.zeros(lengths.numel() + 1, dtype=torch.int32)
    cu[1:] = torch.cumsum(lengths, dim=0).to(torch.int32)
    return cu


def max_seqlen_in_batch(cu_seqlens: torch.Tensor) -> int:
    return int((cu_seqlens[1:] - cu_seqlens[:-1]).max().item())


@dataclass
class PackedDataCollator:
    """Flatten a list of samples into a single packed row.

    Args:
        pad_to_multiple_of: pad the packed row so that GPU kernels see aligned shapes (64 is a good
            value for tensor cores; 1 disables padding).
        return_cu_seqlens: also return `cu_seqlens` / `max_seqlen` for custom attention patches.
    """

    pad_token_id: int = 0
    pad_to_multiple_of: int = 64
    max_length: Optional[int] = None
    return_cu_seqlens: bool = True
    device: str = "cpu"

    def _pad_len(self, n: int) -> int:
        if self.pad_to_multiple_of <= 1:
            return 0
        return (-n) % self.pad_to_multiple_of

    def __call__(self, features: Sequence[Dict[str, Any]]) -> Dict[str, torch.Tensor]:
        input_ids: List[int] = []
        labels: List[int] = []
        position_ids: List[int] = []
        for feature in features:
            ids = list(feature["input_ids"])
            lab = list(feature.get("labels", ids))
            if self.max_length is not None and len(input_ids) + len(ids) > self.max_length:
                break
            input_ids.extend(ids)
            # the first label of every sample must not be predicted from the previous sample
            labels.extend([IGNORE_INDEX] + lab[1:])
            position_ids.extend(range(len(ids)))

        pad = self._pad_len(len(input_ids))
        if pad:
            input_ids.extend([self.pad_token_id] * pad)
            labels.extend([IGNORE_INDEX] * pad)
            # padding forms its own (ignored) segment
            position_ids.extend(range(pad))

        batch = {
            "input_ids": torch.tensor([input_ids], dtype=torch.long, device=self.device),
            "labels": torch.tensor([labels], dtype=torch.long, device=self.device),
            "position_ids": torch.tensor([position_ids], dtype=torch.long, device=self.device),
        }
        if self.return_cu_seqlens:
            cu = get_cu_seqlens(batch["position_ids"])
            batch["cu_seqlens"] = cu
            batch["max_seqlen"] = torch.tensor(max_seqlen_in_batch(cu))
        return batch


def multipack_bins(lengths: np.ndarray, bin_capacity: int, num_bins_hint: int = 0) -> List[List[int]]:
    """First-fit-decreasing bin packing of sample indices by token length (numpy, CPU)."""
    order = np.argsort(-lengths, kind="stable")
    bins: List[List[int]] = []
    remaining: List[int] = []
    for idx in order:
        length = int(lengths[idx])
        if length > bin_capacity:
            continue
        for b, space in enumerate(remaining):
            if space >= length:
                bins[b].append(int(idx))
                remaining[b] -= length
                break
        else:
            bins.append([int(idx)])
            remaining.append(bin_capacity - length)
    return bins


def packing_efficiency(lengths: np.ndarray, bins: List[List[int]], bin_capacity: int) -> float:
    if not bins:
        return 0.0
    used = sum(int(lengths[i]) for b in bins for i in b)
    return used / (len(bins) * bin_capacity)
