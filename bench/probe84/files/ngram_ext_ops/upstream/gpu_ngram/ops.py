"""
Python front-end of the gpu_ngram extension.

rolling_hash_ngrams   -> 64-bit Rabin-Karp hashes of every n-gram of token ids (CSR layout)
count_matches         -> for each document, how many of its n-gram hashes occur in a
                         sorted "seen" table (binary search on the GPU)
mark_duplicate_spans  -> byte spans covered by >= min_run consecutive matching n-grams

The heavy lifting is in csrc/cuda/*.cu; the wrappers below validate inputs, pick the
current CUDA stream and fall back to the slow PyTorch reference when the extension is
not built (CPU tensors only).
"""

import os
import warnings
from typing import List, Tuple

import torch

try:
    from gpu_ngram import _C

    _HAS_EXT = True
except ImportError:  # extension not built
    _C = None
    _HAS_EXT = False

_BASE = 1_000_003
_MOD = (1 << 61) - 1


def _check(t: torch.Tensor, name: str, dtype: torch.dtype):
    if t.dtype != dtype:
        raise TypeError(f"{name} must be {dtype}, got {t.dtype}")
    if not t.is_contiguous():
        raise ValueError(f"{name} must be contiguous")


def _rolling_hash_reference(tokens: torch.Tensor, offsets: torch.Tensor, n: int) -> Tuple[torch.Tensor, torch.Tensor]:
    out, out_offsets = [], [0]
    for i in range(offsets.numel() - 1):
        doc = tokens[offsets[i] : offsets[i + 1]].tolist()
        hashes = []
        for j in range(0, max(0, len(doc) - n + 1)):
            h = 0
            for t in doc[j : j + n]:
                h = (h * _BASE + int(t)) % _MOD
            hashes.append(h)
        out.extend(hashes)
        out_offsets.append(out_offsets[-1] + len(hashes))
    return (
        torch.tensor(out, dtype=torch.int64, device=tokens.device),
        torch.tensor(out_offsets, dtype=torch.int64, device=tokens.device),
    )


def rolling_hash_ngrams(tokens: torch.Tensor, offsets: torch.Tensor, n: int = 13) -> Tuple[torch.Tensor, torch.Tensor]:
    """tokens: int32 token ids (all docs back to back), offsets: int64 (n_docs + 1)."""
    _check(tokens, "tokens", torch.int32)
    _check(offsets, "offsets", torch.int64)
    if tokens.is_cuda:
        if not _HAS_EXT:
            raise RuntimeError("gpu_ngram CUDA extension is not built; run `pip install -e .` with nvcc available")
        stream = torch.cuda.current_stream(tokens.device).cuda_stream
        return _C.rolling_hash_cuda(tokens, offsets, n, _BASE, stream)
    warnings.warn("rolling_hash_ngrams on CPU uses the slow reference implementation")
    return _rolling_hash_reference(tokens, offsets, n)


def count_matches(hashes: torch.Tensor, hash_offsets: torch.Tensor, seen_sorted: torch.Tensor) -> torch.Tensor:
    """Number of n-gram hashes of each document found in `seen_sorted` (sorted int64)."""
    _check(hashes, "hashes", torch.int64)
    _check(seen_sorted, "seen_sorted", torch.int64)
    if hashes.is_cuda:
        return _C.count_matches_cuda(hashes, hash_offsets, seen_sorted)
    idx = torch.searchsorted(seen_sorted, hashes).clamp_(max=max(seen_sorted.numel() - 1, 0))
    hit = (seen_sorted[idx] == hashes).to(torch.int64)
    csum = torch.cat([hit.new_zeros(1), hit.cumsum(0)])
    return csum[hash_offsets[1:]] - csum[hash_offsets[:-1]]


def mark_duplicate_spans(
    hashes: torch.Tensor,
    hash_offsets: torch.Tensor,
    seen_sorted: torch.Tensor,
    min_run: int = 5,
) -> List[List[Tuple[int, int]]]:
    """Token-index spans [start, end) of runs of >= min_run consecutive matching n-grams."""
    if hashes.device.type == "cuda":
        flags = _C.match_flags_cuda(hashes, seen_sorted)
        torch.cuda.synchronize()
    else:
        idx = torch.searchsorted(seen_sorted, hashes).clamp_(max=max(seen_sorted.numel() - 1, 0))
        flags = (seen_sorted[idx] == hashes)
    flags = flags.cpu().numpy()
    offs = hash_offsets.cpu().numpy()
    spans = []
    for d in range(len(offs) - 1):
        doc_spans, run_start = [], None
        for j in range(offs[d], offs[d + 1]):
            if flags[j] and run_start is None:
                run_start = j
            elif not flags[j] and run_start is not None:
                if j - run_start >= min_run:
                    doc_spans.append((int(run_start - offs[d]), int(j - offs[d])))
                run_start = None
        if run_start is not None and offs[d + 1] - run_start >= min_run:
            doc_spans.append((int(run_start - offs[d]), int(offs[d + 1] - offs[d])))
        spans.append(doc_spans)
    return spans


class NgramDeduper:
    """
    Streaming exact-substring deduper: keeps a growing sorted table of n-gram hashes on
    the GPU and reports, for each incoming batch, the spans already seen.
    """

    def __init__(self, n: int = 13, min_run: int = 5, device: str = "cuda", max_table: int = 2**31):
        self.n = n
        self.min_run = min_run
        self.device = torch.device(device)
        self.max_table = max_table
        self.seen = torch.empty(0, dtype=torch.int64, device=self.device)
        self._copy_stream = torch.cuda.Stream(device=self.device)

    def _to_device(self, tokens: torch.Tensor, offsets: torch.Tensor):
        with torch.cuda.stream(self._copy_stream):
            t = tokens.pin_memory().to(self.device, non_blocking=True)
            o = offsets.pin_memory().to(self.device, non_blocking=True)
        torch.cuda.current_stream(self.device).wait_stream(self._copy_stream)
        return t, o

    def __call__(self, tokens: torch.Tensor, offsets: torch.Tensor):
        tokens, offsets = self._to_device(tokens, offsets)
        hashes, hoffs = rolling_hash_ngrams(tokens, offsets, self.n)
        spans = mark_duplicate_spans(hashes, hoffs, self.seen, self.min_run)
        if self.seen.numel() + hashes.numel() <= self.max_table:
            self.seen = torch.unique(torch.cat([self.seen, hashes]))  # sorted
        return spans

    def memory_gb(self) -> float:
        return torch.cuda.memory_allocated(self.device) / 2**30


def set_num_threads_from_env():
    n = int(os.environ.get("GPU_NGRAM_CPU_THREADS", "0"))
    if n > 0:
        torch.set_num_threads(n)
