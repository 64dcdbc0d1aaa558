"""
Embedding quantization for first-stage retrieval: int8 scalar quantization with calibrated
per-dimension ranges, symmetric qint8, and binary (sign) codes with Hamming search + float rescoring.

Typical use (binary retrieval, int8 rescoring):

    ranges = calibrate_ranges(calib_embeddings)
    db_bin = quantize_binary(corpus_embeddings)
    db_i8 = quantize_int8(corpus_embeddings, ranges)
    hits = binary_search_with_rescore(query_embeddings, db_bin, db_i8, ranges, top_k=10)
"""
from __future__ import annotations

import logging
from typing import Optional, Tuple

import numpy as np
import torch
from torch import Tensor

logger = logging.getLogger(__name__)

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# number of set bits for every byte value, used for popcount on packed codes
_POPCOUNT = torch.tensor([bin(i).count("1") for i in range(256)], dtype=torch.uint8)


def _calib_dtype() -> torch.dtype:
    if DEVICE.type == "cuda" and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float32


@torch.no_grad()
def calibrate_ranges(embeddings: Tensor, n_std: float = 3.0, use_minmax: bool = False) -> Tensor:
    """
    Per-dimension [low, high] ranges for int8 scalar quantization.

    With ``use_minmax`` the raw min / max of the calibration set are used, otherwise mean +- n_std * std,
    which is much less sensitive to outliers.
    """
    emb = embeddings.to(DEVICE, dtype=torch.float32)
    if use_minmax:
        low, high = emb.min(dim=0).values, emb.max(dim=0).values
    else:
        std, mean = torch.std_mean(emb, dim=0)
        low, high = mean - n_std * std, mean + n_std * std
    return torch.stack([low, high]).cpu()


@torch.no_grad()
def quantize_int8(embeddings: Tensor, ranges: Tensor) -> Tensor:
    emb = embeddings.to(DEVICE, dtype=torch.float32)
    ranges = ranges.to(emb.device)
    starts = ranges[0]
    steps = (ranges[1] - ranges[0]) / 255
    q = torch.round((emb - starts) / steps - 128)
    return q.clamp_(-128, 127).to(torch.int8).cpu()


@torch.no_grad()
def quantize_qint8_symmetric(embeddings: Tensor) -> Tuple[Tensor, float]:
    """Symmetric per-tensor qint8 (what torch.ao would produce); returns int8 codes and the scale."""
    emb = embeddings.to(DEVICE, dtype=torch.float32)
    scale = float(emb.abs().max() / 127.0)
    q = torch.quantize_per_tensor(emb, scale, 0, torch.qint8)
    return q.int_repr().cpu(), scale


def dequantize_int8(codes: Tensor, ranges: Tensor) -> Tensor:
    ranges = ranges.to(codes.device)
    steps = (ranges[1] - ranges[0]) / 255
    return (codes.float() + 128) * steps + ranges[0]


def quantize_binary(embeddings: Tensor) -> np.ndarray:
    """Sign bits packed 8 per byte (ubinary)."""
    bits = (embeddings > 0).cpu().numpy()
    return np.packbits(bits, axis=-1)


@torch.no_grad()
def hamming_topk(query_bin: np.ndarray, db_bin: np.ndarray, k: int, chunk: int = 262_144) -> Tuple[Tensor, Tensor]:
    popcount = _POPCOUNT.to(DEVICE)
    q = torch.from_numpy(query_bin).to(DEVICE)
    best_d, best_i = None, None
    for start in range(0, db_bin.shape[0], chunk):
        db = torch.from_numpy(db_bin[start : start + chunk]).to(DEVICE, non_blocking=True)
        xor = torch.bitwise_xor(q[:, None, :], db[None, :, :])
        dist = popcount[xor.long()].sum(dim=-1, dtype=torch.int32)
        d, i = torch.topk(dist, min(k, dist.shape[1]), dim=1, largest=False)
        i = i + start
        if best_d is None:
            best_d, best_i = d, i
        else:
            cat_d, cat_i = torch.cat([best_d, d], 1), torch.cat([best_i, i], 1)
            best_d, pos = torch.topk(cat_d, k, dim=1, largest=False)
            best_i = torch.gather(cat_i, 1, pos)
    return best_d.cpu(), best_i.cpu()


@torch.no_grad()
def binary_search_with_rescore(
    query_embeddings: Tensor,
    db_bin: np.ndarray,
    db_int8: Tensor,
    ranges: Tensor,
    top_k: int = 10,
    rescore_multiplier: int = 4,
) -> Tuple[Tensor, Tensor]:
    """Hamming search over the binary codes, then rescore the candidates with float queries x int8 docs."""
    q_bin = quantize_binary(query_embeddings)
    _, cand = hamming_topk(q_bin, db_bin, top_k * rescore_multiplier)

    dtype = _calib_dtype()
    q = query_embeddings.to(DEVICE, dtype=dtype)
    docs = dequantize_int8(db_int8[cand.reshape(-1)].to(DEVICE), ranges).to(dtype)
    docs = docs.view(cand.shape[0], cand.shape[1], -1)
    scores = torch.einsum("qd,qkd->qk", q, docs).float()
    top_scores, pos = scores.topk(top_k, dim=1)
    top_ids = torch.gather(cand.to(DEVICE), 1, pos)
    return top_scores.cpu(), top_ids.cpu()


def report(db_float: Optional[Tensor], db_bin: np.ndarray, db_int8: Tensor) -> None:
    mb = lambda n: n / 2**20  # noqa: E731
    if db_float is not None:
        logger.info("float32: %.1f MB", mb(db_float.numel() * 4))
    logger.info("int8:    %.1f MB", mb(db_int8.numel()))
    logger.info("binary:  %.1f MB", mb(db_bin.size))
