"""
Fused MaxSim (ColBERT late interaction) scoring in Triton.

score(q, d) = sum_i max_j <q_i, d_j>   over valid document tokens j

The naive torch version materialises a (B, Lq, Ld) similarity tensor per candidate batch; the
kernel streams document tokens through SRAM and keeps only the running row maxima.
"""
import math

import torch
import triton
import triton.language as tl


def _configs():
    configs = []
    for block_q in (16, 32):
        for block_d in (32, 64, 128):
            for warps in (4, 8):
                configs.append(
                    triton.Config({"BLOCK_Q": block_q, "BLOCK_D": block_d}, num_warps=warps, num_stages=3)
                )
    return configs


@triton.autotune(configs=_configs(), key=["Lq", "Ld", "DIM"])
@triton.jit
def _maxsim_fwd_kernel(
    Q, D, DMASK, OUT,
    Lq, Ld,
    stride_qb, stride_ql, stride_qk,
    stride_db, stride_dl, stride_dk,
    stride_mb, stride_ml,
    DIM: tl.constexpr,
    BLOCK_Q: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    pid_b = tl.program_id(0)  # candidate (query, document) pair
    pid_q = tl.program_id(1)  # block of query tokens

    offs_q = pid_q * BLOCK_Q + tl.arange(0, BLOCK_Q)
    offs_k = tl.arange(0, DIM)

    q_ptrs = Q + pid_b * stride_qb + offs_q[:, None] * stride_ql + offs_k[None, :] * stride_qk
    q = tl.load(q_ptrs, mask=offs_q[:, None] < Lq, other=0.0)

    best = tl.full((BLOCK_Q,), float("-inf"), dtype=tl.float32)
    for start in range(0, Ld, BLOCK_D):
        offs_d = start + tl.arange(0, BLOCK_D)
        d_ptrs = D + pid_b * stride_db + offs_d[None, :] * stride_dl + offs_k[:, None] * stride_dk
        d = tl.load(d_ptrs, mask=offs_d[None, :] < Ld, other=0.0, eviction_policy="evict_first")
        valid = tl.load(DMASK + pid_b * stride_mb + offs_d * stride_ml, mask=offs_d < Ld, other=0)

        s = tl.dot(q, d)  # (BLOCK_Q, BLOCK_D), fp32 accumulate
        s = tl.where(valid[None, :] > 0, s, float("-inf"))
        best = tl.maximum(best, tl.max(s, axis=1))

    best = tl.where(offs_q < Lq, best, 0.0)
    tl.atomic_add(OUT + pid_b, tl.sum(best, axis=0))


def maxsim_torch(Q: torch.Tensor, D: torch.Tensor, D_mask: torch.Tensor, chunk: int = 1024) -> torch.Tensor:
    """Reference implementation (also the CPU path). Q: (B, Lq, dim), D: (B, Ld, dim), D_mask: (B, Ld)."""
    out = []
    for s in range(0, Q.shape[0], chunk):
        sim = torch.einsum("bqk,bdk->bqd", Q[s : s + chunk].float(), D[s : s + chunk].float())
        sim = sim.masked_fill(~D_mask[s : s + chunk].bool()[:, None, :], float("-inf"))
        out.append(sim.max(dim=-1).values.sum(dim=-1))
    return torch.cat(out)


def _check_inputs(Q, D, D_mask):
    assert Q.is_cuda and D.is_cuda and D_mask.is_cuda, "maxsim_triton expects CUDA tensors"
    assert Q.shape[0] == D.shape[0] == D_mask.shape[0]
    assert Q.shape[-1] == D.shape[-1]
    assert Q.shape[-1] in (64, 96, 128), "token dim must be 64, 96 or 128"


def maxsim_triton(Q: torch.Tensor, D: torch.Tensor, D_mask: torch.Tensor) -> torch.Tensor:
    _check_inputs(Q, D, D_mask)
    B, Lq, dim = Q.shape
    Ld = D.shape[1]

    major, minor = torch.cuda.get_device_capability(Q.device)
    if Q.dtype == torch.bfloat16 and major < 8:
        # no bf16 tensor cores before Ampere
        Q, D = Q.half(), D.half()

    D_mask = D_mask.to(torch.int8).contiguous()
    out = torch.zeros(B, device=Q.device, dtype=torch.float32)

    grid = lambda meta: (B, triton.cdiv(Lq, meta["BLOCK_Q"]))  # noqa: E731
    with torch.cuda.device(Q.device):
        _maxsim_fwd_kernel[grid](
            Q, D, D_mask, out,
            Lq, Ld,
            Q.stride(0), Q.stride(1), Q.stride(2),
            D.stride(0), D.stride(1), D.stride(2),
            D_mask.stride(0), D_mask.stride(1),
            DIM=dim,
        )
    return out


def _candidate_chunk(Q: torch.Tensor, Ld: int) -> int:
    """How many candidates to score per launch: a few waves over the SMs, bounded by memory."""
    sm_count = torch.cuda.get_device_properties(Q.device).multi_processor_count
    per_cand = Q.shape[1] * Q.shape[2] + Ld * Q.shape[2]
    by_mem = max(1, (256 << 20) // (per_cand * Q.element_size()))
    return int(min(by_mem, 8 * sm_count * max(1, math.ceil(Q.shape[1] / 16))))


def colbert_score(Q: torch.Tensor, D_padded: torch.Tensor, D_mask: torch.Tensor) -> torch.Tensor:
    """
    Q: (1 or B, Lq, dim) query embeddings, D_padded: (B, Ld, dim), D_mask: (B, Ld).
    Returns (B,) MaxSim scores.
    """
    if Q.shape[0] == 1:
        Q = Q.expand(D_padded.shape[0], -1, -1)
    if Q.device.type == "cpu":
        return maxsim_torch(Q, D_padded, D_mask)

    Q, D_padded = Q.contiguous(), D_padded.contiguous()
    step = _candidate_chunk(Q, D_padded.shape[1])
    scores = [
        maxsim_triton(Q[s : s + step], D_padded[s : s + step], D_mask[s : s + step])
        for s in range(0, Q.shape[0], step)
    ]
    return torch.cat(scores)
