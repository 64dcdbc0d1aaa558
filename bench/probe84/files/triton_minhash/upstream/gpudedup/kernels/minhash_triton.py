"""
Triton MinHash over pre-hashed character shingles.

The host side turns every document into a flat uint32 array of shingle hashes
(`shingles`) plus CSR offsets (`offsets`, len = n_docs + 1). For every document and
every permutation p the kernel computes

    sig[doc, p] = min_j ((a[p] * shingles[j] + b[p]) mod MERSENNE_PRIME) & 0xFFFFFFFF

i.e. the classic universal-hashing minhash, one program per (document, block of
permutations). Documents are processed in length-sorted order so programs in the same
wave have similar trip counts.
"""

import math
from typing import Optional, Tuple

import torch
import triton
import triton.language as tl

MERSENNE_PRIME = (1 << 61) - 1
MAX_HASH = (1 << 32) - 1


def _autotune_configs():
    configs = []
    for block_p in (32, 64, 128):
        for block_s in (128, 256, 512):
            for num_warps in (4, 8):
                configs.append(
                    triton.Config({"BLOCK_P": block_p, "BLOCK_S": block_s}, num_warps=num_warps, num_stages=3)
                )
    return configs


@triton.autotune(configs=_autotune_configs(), key=["num_perm", "max_doc_len"])
@triton.jit
def _minhash_kernel(
    shingles_ptr,
    offsets_ptr,
    a_ptr,
    b_ptr,
    sig_ptr,
    num_perm,
    max_doc_len,
    stride_sig_doc,
    BLOCK_P: tl.constexpr,
    BLOCK_S: tl.constexpr,
):
    doc = tl.program_id(0)
    pid_p = tl.program_id(1)

    start = tl.load(offsets_ptr + doc)
    end = tl.load(offsets_ptr + doc + 1)

    perm = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    perm_mask = perm < num_perm
    a = tl.load(a_ptr + perm, mask=perm_mask, other=1).to(tl.uint64)
    b = tl.load(b_ptr + perm, mask=perm_mask, other=0).to(tl.uint64)

    running_min = tl.full((BLOCK_P,), 0xFFFFFFFF, dtype=tl.uint64)
    for s0 in range(start, end, BLOCK_S):
        idx = s0 + tl.arange(0, BLOCK_S)
        smask = idx < end
        sh = tl.load(shingles_ptr + idx, mask=smask, other=0, cache_modifier=".cg").to(tl.uint64)
        # (BLOCK_P, BLOCK_S) tile of permuted hashes
        h = (a[:, None] * sh[None, :] + b[:, None]) % 2305843009213693951
        h = h & 0xFFFFFFFF
        h = tl.where(smask[None, :], h, 0xFFFFFFFF)
        running_min = tl.minimum(running_min, tl.min(h, axis=1))

    tl.store(sig_ptr + doc * stride_sig_doc + perm, running_min.to(tl.uint32), mask=perm_mask)


def make_permutations(num_perm: int, seed: int = 42, device: Optional[torch.device] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator(device="cpu").manual_seed(seed)
    a = torch.randint(1, MERSENNE_PRIME, (num_perm,), generator=gen, dtype=torch.int64)
    b = torch.randint(0, MERSENNE_PRIME, (num_perm,), generator=gen, dtype=torch.int64)
    if device is not None:
        a, b = a.to(device), b.to(device)
    return a, b


def minhash(
    shingles: torch.Tensor,
    offsets: torch.Tensor,
    num_perm: int = 256,
    seed: int = 42,
    perms: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
) -> torch.Tensor:
    """
    shingles: uint32/int64 tensor with all documents' shingle hashes back to back.
    offsets:  int64 CSR offsets, shape (n_docs + 1,).
    Returns a (n_docs, num_perm) uint32 signature matrix on the same device.
    """
    assert shingles.is_cuda and offsets.is_cuda, "minhash expects CUDA tensors"
    n_docs = offsets.numel() - 1
    if perms is None:
        perms = make_permutations(num_perm, seed, device=shingles.device)
    a, b = perms
    lengths = offsets[1:] - offsets[:-1]
    max_doc_len = int(lengths.max().item()) if n_docs else 0
    sig = torch.empty((n_docs, num_perm), dtype=torch.uint32, device="cuda")

    grid = lambda meta: (n_docs, triton.cdiv(num_perm, meta["BLOCK_P"]))  # noqa: E731
    with torch.cuda.device(shingles.device):
        _minhash_kernel[grid](
            shingles,
            offsets,
            a,
            b,
            sig,
            num_perm,
            max_doc_len,
            sig.stride(0),
        )
    return sig


def pick_chunk_docs(avg_doc_len: float, num_perm: int, device: Optional[torch.device] = None) -> int:
    """
    How many documents to launch per call so that each SM gets a few waves and the
    signature buffer stays small. Used by the streaming driver.
    """
    props = torch.cuda.get_device_properties(device or torch.cuda.current_device())
    sms = props.multi_processor_count
    waves = 8
    progs_per_doc = math.ceil(num_perm / 64)
    chunk = max(1, sms * waves // progs_per_doc)
    # keep the signature buffer under ~1/16 of device memory
    budget = props.total_memory // 16
    return int(min(chunk * 64, budget // (4 * num_perm), max(1, 2**26 // max(1, int(avg_doc_len)))))


def reference_minhash(shingles: torch.Tensor, offsets: torch.Tensor, num_perm: int = 256, seed: int = 42) -> torch.Tensor:
    """Slow PyTorch reference used by the tests (works on any device)."""
    a, b = make_permutations(num_perm, seed, device=shingles.device)
    out = []
    for i in range(offsets.numel() - 1):
        sh = shingles[offsets[i] : offsets[i + 1]].to(torch.int64)
        h = (a[:, None] * sh[None, :] + b[:, None]) % MERSENNE_PRIME
        h = h & MAX_HASH
        out.append(h.min(dim=1).values if sh.numel() else torch.full((num_perm,), MAX_HASH, device=sh.device))
    return torch.stack(out).to(torch.uint32) if out else torch.empty((0, num_perm), dtype=torch.uint32, device=shingles.device)
