"""Fused log-softmax + gather for transducer losses, written in Triton.

The joint network produces logits of shape (B, T, U+1, V). A transducer loss
only needs two numbers per lattice node: log p(blank) and log p(next label).
Materialising the full log-softmax costs a (B, T, U+1, V) fp32 tensor; this
kernel computes the normaliser on the fly and writes the two (B, T, U+1)
tensors directly. The backward kernel rebuilds softmax from the logits and
scatters the two incoming gradients, so nothing of size V is saved.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _rnnt_logprobs_fwd_kernel(
    x_ptr,
    targets_ptr,
    source_lengths_ptr,
    target_lengths_ptr,
    max_source_len: int,
    max_target_len_plus_1: int,
    num_labels: int,
    blank_id: int,
    target_scores_ptr,
    blank_scores_ptr,
    BLOCK_SIZE: tl.constexpr,
):
    batch_i = tl.program_id(axis=0).to(tl.int64)
    source_i = tl.program_id(axis=1).to(tl.int64)
    target_i = tl.program_id(axis=2).to(tl.int64)

    source_len = tl.load(source_lengths_ptr + batch_i)
    target_len = tl.load(target_lengths_ptr + batch_i)
    if source_i >= source_len or target_i > target_len:
        return

    node = (batch_i * max_source_len + source_i) * max_target_len_plus_1 + target_i
    x_ptr += node * num_labels
    col = tl.arange(0, BLOCK_SIZE)
    mask = col < num_labels
    logits = tl.load(x_ptr + col, mask=mask, other=-float("inf")).to(tl.float32)
    logits_max = tl.max(logits, axis=0)
    log_denom = logits_max + tl.log(tl.sum(tl.exp(logits - logits_max), axis=0))

    blank_logit = tl.load(x_ptr + blank_id).to(tl.float32)
    tl.store(blank_scores_ptr + node, blank_logit - log_denom)
    if target_i < target_len:
        target_id = tl.load(targets_ptr + batch_i * (max_target_len_plus_1 - 1) + target_i)
        target_logit = tl.load(x_ptr + target_id).to(tl.float32)
        tl.store(target_scores_ptr + node, target_logit - log_denom)


@triton.jit
def _rnnt_logprobs_bwd_kernel(
    x_ptr,
    grad_x_ptr,
    targets_ptr,
    source_lengths_ptr,
    target_lengths_ptr,
    max_source_len: int,
    max_target_len_plus_1: int,
    num_labels: int,
    blank_id: int,
    grad_target_scores_ptr,
    grad_blank_scores_ptr,
    BLOCK_SIZE: tl.constexpr,
):
    batch_i = tl.program_id(axis=0).to(tl.int64)
    source_i = tl.program_id(axis=1).to(tl.int64)
    target_i = tl.program_id(axis=2).to(tl.int64)

    source_len = tl.load(source_lengths_ptr + batch_i)
    target_len = tl.load(target_lengths_ptr + batch_i)
    node = (batch_i * max_source_len + source_i) * max_target_len_plus_1 + target_i
    x_ptr += node * num_labels
    grad_x_ptr += node * num_labels
    col = tl.arange(0, BLOCK_SIZE)
    mask = col < num_labels

    if source_i >= source_len or target_i > target_len:
        tl.store(grad_x_ptr + col, tl.zeros([BLOCK_SIZE], dtype=tl.float32), mask=mask)
        return

    logits = tl.load(x_ptr + col, mask=mask, other=-float("inf")).to(tl.float32)
    logits_max = tl.max(logits, axis=0)
    e = tl.exp(logits - logits_max)
    softmax = e / tl.sum(e, axis=0)

    g_blank = tl.load(grad_blank_scores_ptr + node)
    g_target = 0.0
    target_id = -1
    if target_i < target_len:
        target_id = tl.load(targets_ptr + batch_i * (max_target_len_plus_1 - 1) + target_i)
        g_target = tl.load(grad_target_scores_ptr + node)

    grad = -(g_blank + g_target) * softmax
    grad = tl.where(col == blank_id, grad + g_blank, grad)
    grad = tl.where(col == target_id, grad + g_target, grad)
    tl.store(grad_x_ptr + col, grad, mask=mask)


class RNNTLogProbs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, targets, blank_id, source_lengths, target_lengths):
        assert logits.is_cuda, "rnnt_logprobs_triton needs the joint logits on a CUDA device"
        assert logits.is_contiguous()
        B, T, U1, V = logits.shape
        target_scores = torch.zeros(B, T, U1, dtype=torch.float32, device=logits.device)
        blank_scores = torch.zeros_like(target_scores)

        with torch.cuda.device(logits.device.index):
            _rnnt_logprobs_fwd_kernel[(B, T, U1)](
                logits,
                targets,
                source_lengths,
                target_lengths,
                T,
                U1,
                V,
                blank_id,
                target_scores,
                blank_scores,
                BLOCK_SIZE=triton.next_power_of_2(V),
                num_warps=8,
            )

        ctx.save_for_backward(logits, targets, source_lengths, target_lengths)
        ctx.blank_id = blank_id
        return target_scores[:, :, :-1], blank_scores

    @staticmethod
    def backward(ctx, grad_target_scores, grad_blank_scores):
        logits, targets, source_lengths, target_lengths = ctx.saved_tensors
        B, T, U1, V = logits.shape
        grad_target_full = torch.zeros(B, T, U1, dtype=torch.float32, device=logits.device)
        grad_target_full[:, :, :-1] = grad_target_scores
        grad_blank_scores = grad_blank_scores.contiguous()
        grad_logits = torch.empty_like(logits, dtype=torch.float32)

        with torch.cuda.device(grad_logits.device.index):
            _rnnt_logprobs_bwd_kernel[(B, T, U1)](
                logits,
                grad_logits,
                targets,
                source_lengths,
                target_lengths,
                T,
                U1,
                V,
                ctx.blank_id,
                grad_target_full,
                grad_blank_scores,
                BLOCK_SIZE=triton.next_power_of_2(V),
                num_warps=4,
            )
        return grad_logits.to(logits.dtype), None, None, None, None


def rnnt_logprobs_triton(
    logits: torch.Tensor,
    targets: torch.Tensor,
    blank_id: int,
    source_lengths: torch.Tensor,
    target_lengths: torch.Tensor,
):
    """Returns (target_logprobs (B, T, U), blank_logprobs (B, T, U+1)) in fp32."""
    return RNNTLogProbs.apply(
        logits.contiguous(), targets.contiguous(), blank_id, source_lengths, target_lengths
    )


def rnnt_logprobs_torch(logits, targets, blank_id, source_lengths, target_lengths):
    """Reference implementation (materialises the full log-softmax)."""
    log_probs = logits.float().log_softmax(dim=-1)
    blank_scores = log_probs[..., blank_id]
    B, T, U1, V = logits.shape
    index = targets.long().unsqueeze(1).expand(B, T, U1 - 1).unsqueeze(-1)
    target_scores = torch.gather(log_probs[:, :, :-1, :], 3, index).squeeze(-1)
    return target_scores, blank_scores
