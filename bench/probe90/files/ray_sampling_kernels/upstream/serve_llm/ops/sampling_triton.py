"""
Fused sampling kernels used by the Ray Serve LLM replicas (custom decoding loop for the
speculative/draft models that vLLM does not cover).

  apply_penalties_   in-place repetition / presence / frequency penalties
  sample_gumbel      temperature + Gumbel-max sampling in one pass over the vocab

Backends: "triton" (default) or "torch" (reference, used by the unit tests).
"""
import os
from typing import Optional

import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import libdevice

SAMPLER_BACKEND = os.environ.get("SERVE_SAMPLER_BACKEND", "triton")


# ----------------------------------------------------------------------------- kernels
@triton.jit
def _penalty_kernel(
    logits_ptr,
    counts_ptr,
    rep_ptr,
    pres_ptr,
    freq_ptr,
    vocab_size,
    stride_l,
    stride_c,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    col_block = tl.program_id(1)
    cols = col_block * BLOCK + tl.arange(0, BLOCK)
    mask = cols < vocab_size

    logits = tl.load(logits_ptr + row * stride_l + cols, mask=mask, other=0.0)
    counts = tl.load(counts_ptr + row * stride_c + cols, mask=mask, other=0)
    rep = tl.load(rep_ptr + row)
    pres = tl.load(pres_ptr + row)
    freq = tl.load(freq_ptr + row)

    seen = counts > 0
    logits = tl.where(seen & (logits > 0), logits / rep, logits)
    logits = tl.where(seen & (logits <= 0), logits * rep, logits)
    logits = logits - freq * counts.to(tl.float32) - pres * seen.to(tl.float32)
    tl.store(logits_ptr + row * stride_l + cols, logits, mask=mask)


@triton.jit
def _gumbel_argmax_kernel(
    logits_ptr,
    temp_ptr,
    out_ptr,
    seed,
    vocab_size,
    stride_l,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0)
    temp = tl.load(temp_ptr + row)
    best_val = tl.full([BLOCK], float("-inf"), tl.float32)
    best_idx = tl.zeros([BLOCK], tl.int32)
    for start in range(0, vocab_size, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < vocab_size
        x = tl.load(logits_ptr + row * stride_l + cols, mask=mask, other=float("-inf")).to(tl.float32)
        u = tl.rand(seed + row, cols)
        g = -libdevice.log(-libdevice.log(u + 1e-10) + 1e-10)
        score = tl.where(temp > 0, x / tl.maximum(temp, 1e-5) + g, x)
        take = score > best_val
        best_val = tl.where(take, score, best_val)
        best_idx = tl.where(take, cols, best_idx)
    winner = tl.argmax(best_val, axis=0)
    idx = tl.sum(tl.where(tl.arange(0, BLOCK) == winner, best_idx, 0), axis=0)
    tl.store(out_ptr + row, idx)


@triton.jit
def _topk_threshold_kernel(
    logits_ptr,
    kth_ptr,
    vocab_size,
    stride_l,
    BLOCK: tl.constexpr,
):
    """mask everything below the per-row k-th largest logit (k-th value precomputed by torch.topk)"""
    row = tl.program_id(0)
    col_block = tl.program_id(1)
    cols = col_block * BLOCK + tl.arange(0, BLOCK)
    mask = cols < vocab_size
    kth = tl.load(kth_ptr + row)
    x = tl.load(logits_ptr + row * stride_l + cols, mask=mask, other=float("-inf"))
    x = tl.where(x < kth, float("-inf"), x)
    tl.store(logits_ptr + row * stride_l + cols, x, mask=mask)


# ----------------------------------------------------------------------------- launch helpers
_SM_COUNT = {}


def _sm_count(device: torch.device) -> int:
    idx = device.index or 0
    if idx not in _SM_COUNT:
        _SM_COUNT[idx] = torch.cuda.get_device_properties(idx).multi_processor_count
    return _SM_COUNT[idx]


def _block_and_warps(vocab_size: int, device: torch.device):
    # one CTA per (row, block); keep enough blocks in flight to fill every SM twice
    block = min(triton.next_power_of_2(vocab_size), 4096)
    num_warps = 4 if block <= 1024 else (8 if block <= 2048 else 16)
    if _sm_count(device) < 80:  # consumer cards: smaller tiles schedule better
        block = min(block, 2048)
        num_warps = min(num_warps, 8)
    return block, num_warps


# ----------------------------------------------------------------------------- public API
def apply_penalties_(
    logits: torch.Tensor,
    counts: torch.Tensor,
    repetition: torch.Tensor,
    presence: torch.Tensor,
    frequency: torch.Tensor,
) -> torch.Tensor:
    if SAMPLER_BACKEND == "torch":
        seen = counts > 0
        logits = torch.where(seen & (logits > 0), logits / repetition[:, None], logits)
        logits = torch.where(seen & (logits <= 0), logits * repetition[:, None], logits)
        logits -= frequency[:, None] * counts + presence[:, None] * seen
        return logits

    assert logits.is_contiguous() and counts.is_contiguous()
    rows, vocab = logits.shape
    block, num_warps = _block_and_warps(vocab, logits.device)
    grid = (rows, triton.cdiv(vocab, block))
    with torch.cuda.device(logits.device):
        _penalty_kernel[grid](
            logits, counts, repetition, presence, frequency,
            vocab, logits.stride(0), counts.stride(0),
            BLOCK=block, num_warps=num_warps, num_stages=2,
        )
    return logits


def apply_top_k_(logits: torch.Tensor, top_k: torch.Tensor) -> torch.Tensor:
    """in-place top-k masking; rows with top_k <= 0 are left untouched"""
    rows, vocab = logits.shape
    k_max = int(top_k.clamp(min=1).max())
    kth = torch.topk(logits, k_max, dim=-1).values
    idx = (top_k.clamp(min=1, max=k_max) - 1).long()
    kth = kth.gather(1, idx[:, None]).squeeze(1)
    kth = torch.where(top_k > 0, kth, torch.full_like(kth, float("-inf")))
    if SAMPLER_BACKEND == "torch":
        return logits.masked_fill_(logits < kth[:, None], float("-inf"))
    block, num_warps = _block_and_warps(vocab, logits.device)
    grid = (rows, triton.cdiv(vocab, block))
    _topk_threshold_kernel[grid](logits, kth, vocab, logits.stride(0), BLOCK=block, num_warps=num_warps)
    return logits


def sample_gumbel(
    logits: torch.Tensor,
    temperature: torch.Tensor,
    generator: Optional[torch.Generator] = None,
) -> torch.Tensor:
    rows, vocab = logits.shape
    if SAMPLER_BACKEND == "torch":
        probs = torch.softmax(logits.float() / temperature.clamp(min=1e-5)[:, None], dim=-1)
        greedy = temperature <= 0
        sampled = torch.multinomial(probs, 1, generator=generator).view(-1)
        return torch.where(greedy, logits.argmax(-1), sampled)

    out = torch.empty(rows, dtype=torch.int32, device=logits.device)
    seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator, device="cpu"))
    block, num_warps = _block_and_warps(vocab, logits.device)
    with torch.cuda.device(logits.device):  # launch on the logits' GPU
        _gumbel_argmax_kernel[(rows,)](
            logits, temperature, out, seed, vocab, logits.stride(0),
            BLOCK=block, num_warps=num_warps,
        )
    return out.long()


def benchmark(rows: int = 64, vocab: int = 128256, iters: int = 100):
    """quick microbenchmark: python -c 'from serve_llm.ops.sampling_triton import benchmark; benchmark()'"""
    x = torch.randn(rows, vocab, device="cuda", dtype=torch.float32)
    t = torch.full((rows,), 0.8, device="cuda")
    ms = triton.testing.do_bench(lambda: sample_gumbel(x, t), warmup=10, rep=iters)
    print(f"sample_gumbel rows={rows} vocab={vocab}: {ms:.3f} ms")
