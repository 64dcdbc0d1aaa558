"""Tile-wise contrastive loss (Inf-CL style): the B x B similarity matrix is never materialised.

The forward pass computes, for every row of q @ k^T, the log-sum-exp over column tiles in SRAM;
the backward pass recomputes the tiles and accumulates dq / dk. Used as the local part of the
ring loss in ring.py.
"""
import math

import torch
import triton
import triton.language as tl


def _default_blocks():
    # Hopper / Ampere have 228 / 164 KB of shared memory per SM: bigger column tiles fit.
    major, _ = torch.cuda.get_device_capability()
    if major >= 9:
        return 128, 128
    if major >= 8:
        return 64, 128
    return 32, 64


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_Q": 64, "BLOCK_K": 64}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_Q": 64, "BLOCK_K": 128}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_Q": 128, "BLOCK_K": 64}, num_warps=8, num_stages=4),
    ],
    key=["M", "N", "D"],
)
@triton.jit
def _prob_fwd_kernel(
    Q, K, LSE,
    q_stride, k_stride,
    M, N, D,
    scale,
    BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_q = pid * BLOCK_Q + tl.arange(0, BLOCK_Q)
    offs_d = tl.arange(0, BLOCK_D)
    q = tl.load(Q + offs_q[:, None] * q_stride + offs_d[None, :],
                mask=(offs_q[:, None] < M) & (offs_d[None, :] < D), other=0.0)

    m_i = tl.zeros([BLOCK_Q], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_Q], dtype=tl.float32)
    for start_k in range(0, N, BLOCK_K):
        offs_k = start_k + tl.arange(0, BLOCK_K)
        k = tl.load(K + offs_k[:, None] * k_stride + offs_d[None, :],
                    mask=(offs_k[:, None] < N) & (offs_d[None, :] < D), other=0.0,
                    eviction_policy="evict_last")
        s = tl.dot(q, tl.trans(k)) * scale
        s = tl.where(offs_k[None, :] < N, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        l_i = l_i * tl.exp(m_i - m_new) + tl.sum(tl.exp(s - m_new[:, None]), 1)
        m_i = m_new
    lse = m_i + tl.log(l_i)
    tl.store(LSE + offs_q, lse, mask=offs_q < M)


@triton.jit
def _dq_prob_bwd_kernel(
    Q, K, LSE, DLSE, DQ,
    q_stride, k_stride,
    M, N, D,
    scale,
    BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_q = pid * BLOCK_Q + tl.arange(0, BLOCK_Q)
    offs_d = tl.arange(0, BLOCK_D)
    q = tl.load(Q + offs_q[:, None] * q_stride + offs_d[None, :],
                mask=(offs_q[:, None] < M) & (offs_d[None, :] < D), other=0.0)
    lse = tl.load(LSE + offs_q, mask=offs_q < M, other=0.0)
    dlse = tl.load(DLSE + offs_q, mask=offs_q < M, other=0.0)

    dq = tl.zeros([BLOCK_Q, BLOCK_D], dtype=tl.float32)
    for start_k in range(0, N, BLOCK_K):
        offs_k = start_k + tl.arange(0, BLOCK_K)
        k = tl.load(K + offs_k[:, None] * k_stride + offs_d[None, :],
                    mask=(offs_k[:, None] < N) & (offs_d[None, :] < D), other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        p = tl.exp(s - lse[:, None])
        p = tl.where(offs_k[None, :] < N, p, 0.0)
        dq += tl.dot((p * dlse[:, None]).to(k.dtype), k)
    tl.store(DQ + offs_q[:, None] * q_stride + offs_d[None, :], dq * scale,
             mask=(offs_q[:, None] < M) & (offs_d[None, :] < D))


@triton.jit
def _dk_prob_bwd_kernel(
    Q, K, LSE, DLSE, DK,
    q_stride, k_stride,
    M, N, D,
    scale,
    BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_D: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_k = pid * BLOCK_K + tl.arange(0, BLOCK_K)
    offs_d = tl.arange(0, BLOCK_D)
    k = tl.load(K + offs_k[:, None] * k_stride + offs_d[None, :],
                mask=(offs_k[:, None] < N) & (offs_d[None, :] < D), other=0.0)

    dk = tl.zeros([BLOCK_K, BLOCK_D], dtype=tl.float32)
    for start_q in range(0, M, BLOCK_Q):
        offs_q = start_q + tl.arange(0, BLOCK_Q)
        q = tl.load(Q + offs_q[:, None] * q_stride + offs_d[None, :],
                    mask=(offs_q[:, None] < M) & (offs_d[None, :] < D), other=0.0)
        lse = tl.load(LSE + offs_q, mask=offs_q < M, other=0.0)
        dlse = tl.load(DLSE + offs_q, mask=offs_q < M, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        p = tl.exp(s - lse[:, None])
        p = tl.where(offs_q[:, None] < M, p, 0.0)
        dk += tl.dot(tl.trans((p * dlse[:, None]).to(q.dtype)), q)
    tl.store(DK + offs_k[:, None] * k_stride + offs_d[None, :], dk * scale,
             mask=(offs_k[:, None] < N) & (offs_d[None, :] < D))


def _prob_fwd(q, k, scale):
    M, D = q.shape
    N = k.shape[0]
    lse = torch.empty(M, device=q.device, dtype=torch.float32)
    BLOCK_D = triton.next_power_of_2(D)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_Q"]),)
    with torch.cuda.device(q.device.index):
        _prob_fwd_kernel[grid](q, k, lse, q.stride(0), k.stride(0), M, N, D, scale, BLOCK_D=BLOCK_D)
    return lse


def _prob_bwd(q, k, lse, dlse, scale):
    M, D = q.shape
    N = k.shape[0]
    dq = torch.empty_like(q, dtype=torch.float32)
    dk = torch.empty_like(k, dtype=torch.float32)
    BLOCK_D = triton.next_power_of_2(D)
    BLOCK_Q, BLOCK_K = _default_blocks()
    with torch.cuda.device(q.device):
        _dq_prob_bwd_kernel[(triton.cdiv(M, BLOCK_Q),)](
            q, k, lse, dlse, dq, q.stride(0), k.stride(0), M, N, D, scale,
            BLOCK_Q=BLOCK_Q, BLOCK_K=BLOCK_K, BLOCK_D=BLOCK_D, num_warps=8, num_stages=2)
        _dk_prob_bwd_kernel[(triton.cdiv(N, BLOCK_K),)](
            q, k, lse, dlse, dk, q.stride(0), k.stride(0), M, N, D, scale,
            BLOCK_Q=BLOCK_Q, BLOCK_K=BLOCK_K, BLOCK_D=BLOCK_D, num_stages=2, num_warps=8)
    return dq.to(q.dtype), dk.to(k.dtype)


class FlashProb(torch.autograd.Function):
    """lse_i = log sum_j exp(scale * q_i . k_j) without materialising q @ k^T."""

    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float16)
    def forward(ctx, q, k, scale):
        q = q.contiguous()
        k = k.contiguous()
        lse = _prob_fwd(q, k, scale)
        ctx.save_for_backward(q, k, lse)
        ctx.scale = scale
        return lse

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, dlse):
        q, k, lse = ctx.saved_tensors
        dq, dk = _prob_bwd(q, k, lse, dlse.contiguous(), ctx.scale)
        return dq, dk, None


def flash_lse(q, k, scale=1.0):
    return FlashProb.apply(q, k, scale)


def cal_flash_loss(q, k, labels, scale=None):
    """Cross-entropy of q against all k with targets `labels` (one positive per row)."""
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1])
    lse = flash_lse(q, k, scale)
    numerator = scale * (q * k[labels]).sum(-1).float()
    return (lse - numerator).mean()


if __name__ == "__main__":
    # quick numerical check against the dense implementation
    torch.manual_seed(0)
    dev = "cuda"
    q = torch.randn(4096, 512, device=dev, dtype=torch.float16, requires_grad=True)
    k = torch.randn(4096, 512, device=dev, dtype=torch.float16, requires_grad=True)
    labels = torch.arange(4096, device=dev)
    loss = cal_flash_loss(q, k, labels, scale=0.07)
    ref = torch.nn.functional.cross_entropy(0.07 * q.float() @ k.float().T, labels)
    print(f"flash {loss.item():.6f}  dense {ref.item():.6f}")
