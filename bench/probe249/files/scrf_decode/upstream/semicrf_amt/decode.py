"""Semi-Markov CRF log-partition and Viterbi decoding for event-based note transcription.

Each piano key is an independent semi-CRF over frames: a segment [i, j) is either a note
(onset at i, offset at j) or silence.  The score tensor has shape (B, T, T) per key and only
its upper triangle is used.

Two implementations:
  * `semicrf_amt._C` -- fused CUDA kernels (built by setup.py), used automatically for CUDA tensors.
  * the pure PyTorch reference below, used on CPU and for gradient checking.
"""
import math
import warnings
from typing import List, Optional, Tuple

import torch

try:
    from . import _C as _semicrf_cuda
    HAS_CUDA_EXT = True
except ImportError:  # extension not built (CPU-only install)
    _semicrf_cuda = None
    HAS_CUDA_EXT = False

NEG_INF = -1e4


def _check_scores(scores: torch.Tensor, lengths: Optional[torch.Tensor]) -> None:
    if scores.dim() != 4:
        raise ValueError(f"expected (B, K, T, T) scores, got {tuple(scores.shape)}")
    if scores.shape[-1] != scores.shape[-2]:
        raise ValueError("score matrix must be square in the last two dims")
    if lengths is not None and lengths.shape[0] != scores.shape[0]:
        raise ValueError("lengths must have one entry per batch item")


def _use_cuda_kernel(scores: torch.Tensor) -> bool:
    return HAS_CUDA_EXT and scores.is_cuda and scores.dtype in (torch.float32, torch.float16)


# --------------------------------------------------------------------------- log Z
def log_partition_reference(scores: torch.Tensor, noise_scores: torch.Tensor,
                            lengths: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Forward algorithm.

    Args:
        scores: (B, K, T, T) segment scores for note segments [i, j]
        noise_scores: (B, K, T) per-frame scores for the silence state
        lengths: (B,) valid number of frames per item
    Returns:
        (B, K) log partition
    """
    B, K, T, _ = scores.shape
    # cumulative silence score so that a silent gap [i, j) costs cum[j] - cum[i]
    noise_cum = torch.cumsum(noise_scores, dim=-1)
    noise_cum = torch.cat([noise_cum.new_zeros(B, K, 1), noise_cum], dim=-1)

    # alpha[t] = log-sum of all labelings of frames [0, t) that end with a segment boundary at t
    alpha = scores.new_full((B, K, T + 1), NEG_INF)
    alpha[..., 0] = 0.0
    for j in range(1, T + 1):
        # last segment is a note [i, j-1]
        note_terms = alpha[..., :j] + scores[..., :j, j - 1]
        # or a run of silence [i, j)
        sil_terms = alpha[..., :j] + (noise_cum[..., j:j + 1] - noise_cum[..., :j])
        alpha[..., j] = torch.logsumexp(torch.cat([note_terms, sil_terms], dim=-1), dim=-1)

    if lengths is None:
        return alpha[..., T]
    idx = lengths.view(B, 1, 1).expand(B, K, 1)
    return alpha.gather(-1, idx).squeeze(-1)


def log_partition_chunked(scores: torch.Tensor, noise_scores: torch.Tensor, max_note_len: int = 512) -> torch.Tensor:
    """Banded variant: notes longer than `max_note_len` frames are not allowed.

    Uses logcumsumexp over the band so that the inner loop is vectorised over i.
    """
    B, K, T, _ = scores.shape
    noise_cum = torch.cumsum(noise_scores, dim=-1)
    noise_cum = torch.cat([noise_cum.new_zeros(B, K, 1), noise_cum], dim=-1)
    alpha = scores.new_full((B, K, T + 1), NEG_INF)
    alpha[..., 0] = 0.0
    for j in range(1, T + 1):
        lo = max(0, j - max_note_len)
        note_terms = alpha[..., lo:j] + scores[..., lo:j, j - 1]
        sil_prefix = torch.logcumsumexp(alpha[..., :j] - noise_cum[..., :j], dim=-1)
        sil_term = sil_prefix[..., -1] + noise_cum[..., j]
        alpha[..., j] = torch.logaddexp(torch.logsumexp(note_terms, dim=-1), sil_term)
    return alpha[..., T]


def log_partition(scores: torch.Tensor, noise_scores: torch.Tensor,
                  lengths: Optional[torch.Tensor] = None, max_note_len: Optional[int] = None) -> torch.Tensor:
    _check_scores(scores, lengths)
    if _use_cuda_kernel(scores):
        if lengths is None:
            lengths = torch.full((scores.shape[0],), scores.shape[-1], dtype=torch.int32, device=scores.device)
        return _semicrf_cuda.log_partition(scores.contiguous(), noise_scores.contiguous(), lengths.int())
    if max_note_len is not None and lengths is None:
        return log_partition_chunked(scores, noise_scores, max_note_len)
    return log_partition_reference(scores, noise_scores, lengths)


# --------------------------------------------------------------------------- Viterbi
def viterbi_reference(scores: torch.Tensor, noise_scores: torch.Tensor) -> List[List[List[Tuple[int, int]]]]:
    """Max-product version of the forward algorithm with back-pointers.

    Returns, for every batch item and key, the list of decoded note segments (onset, offset).
    """
    B, K, T, _ = scores.shape
    noise_cum = torch.cumsum(noise_scores, dim=-1)
    noise_cum = torch.cat([noise_cum.new_zeros(B, K, 1), noise_cum], dim=-1)

    delta = scores.new_full((B, K, T + 1), NEG_INF)
    delta[..., 0] = 0.0
    back_start = torch.zeros((B, K, T + 1), dtype=torch.long, device=scores.device)
    back_is_note = torch.zeros((B, K, T + 1), dtype=torch.bool, device=scores.device)

    for j in range(1, T + 1):
        note_terms = delta[..., :j] + scores[..., :j, j - 1]
        sil_terms = delta[..., :j] + (noise_cum[..., j:j + 1] - noise_cum[..., :j])
        best_note, arg_note = note_terms.max(dim=-1)
        best_sil, arg_sil = sil_terms.max(dim=-1)
        is_note = best_note > best_sil
        delta[..., j] = torch.where(is_note, best_note, best_sil)
        back_start[..., j] = torch.where(is_note, arg_note, arg_sil)
        back_is_note[..., j] = is_note

    # back-tracking happens on the host: the per-key loops are short and branchy
    back_start = back_start.cpu().numpy()
    back_is_note = back_is_note.cpu().numpy()
    results = []
    for b in range(B):
        per_key = []
        for k in range(K):
            segs = []
            j = T
            while j > 0:
                i = int(back_start[b, k, j])
                if back_is_note[b, k, j]:
                    segs.append((i, j - 1))
                j = i
            per_key.append(segs[::-1])
        results.append(per_key)
    return results


def viterbi(scores: torch.Tensor, noise_scores: torch.Tensor) -> List[List[List[Tuple[int, int]]]]:
    _check_scores(scores, None)
    if _use_cuda_kernel(scores):
        starts, ends, counts = _semicrf_cuda.viterbi(scores.contiguous(), noise_scores.contiguous())
        starts, ends, counts = starts.cpu(), ends.cpu(), counts.cpu()
        out = []
        for b in range(scores.shape[0]):
            per_key = []
            for k in range(scores.shape[1]):
                n = int(counts[b, k])
                per_key.append(list(zip(starts[b, k, :n].tolist(), ends[b, k, :n].tolist())))
            out.append(per_key)
        return out
    if scores.shape[-1] > 2048 and not scores.is_cuda:
        warnings.warn("semi-CRF Viterbi on a long sequence without the CUDA extension; this will be slow.")
    return viterbi_reference(scores, noise_scores)


# --------------------------------------------------------------------------- loss
def semicrf_nll(scores: torch.Tensor, noise_scores: torch.Tensor,
                gold_segments: List[List[List[Tuple[int, int]]]],
                lengths: Optional[torch.Tensor] = None) -> torch.Tensor:
    """Negative log-likelihood of the gold note segments (mean over batch and keys)."""
    B, K, T, _ = scores.shape
    log_z = log_partition(scores, noise_scores, lengths)
    gold = scores.new_zeros(B, K)
    noise_total = noise_scores.sum(dim=-1)
    for b in range(B):
        for k in range(K):
            s = noise_total[b, k]
            for (i, j) in gold_segments[b][k]:
                s = s + scores[b, k, i, j] - noise_scores[b, k, i:j + 1].sum()
            gold[b, k] = s
    return (log_z - gold).mean()


def segments_to_notes(segments, hop_seconds: float, min_pitch: int = 21):
    """Convert decoded (onset, offset) frame segments into (pitch, onset_s, offset_s) triples."""
    notes = []
    for k, segs in enumerate(segments):
        for (i, j) in segs:
            notes.append((min_pitch + k, i * hop_seconds, (j + 1) * hop_seconds))
    notes.sort(key=lambda n: (n[1], n[0]))
    return notes


def benchmark_decode(T: int = 1000, K: int = 88, device: str = "cuda", n_iter: int = 5) -> float:
    """Quick timing helper used in the README table."""
    scores = torch.randn(1, K, T, T, device=device).triu()
    noise = torch.randn(1, K, T, device=device)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n_iter):
        viterbi(scores, noise)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / n_iter
