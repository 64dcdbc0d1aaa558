# Copyright 2025 Bytedance Ltd. and/or its affiliates
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
"""
Fused log-prob / entropy kernels for the PPO actor.

For large vocabularies (150k+) materialising ``log_softmax(logits)`` in fp32 is the
single biggest activation in the actor forward. These kernels stream over the vocab
dimension in blocks and only write out (logprob[label], entropy) per token.
"""

from typing import Optional, Tuple

import torch
import triton
import triton.language as tl


def _get_num_sms(device: torch.device) -> int:
    props = torch.cuda.get_device_properties(device)
    return props.multi_processor_count


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_V": 1024}, num_warps=4, num_stages=2),
        triton.Config({"BLOCK_V": 2048}, num_warps=8, num_stages=2),
        triton.Config({"BLOCK_V": 4096}, num_warps=16, num_stages=3),
    ],
    key=["vocab_size"],
)
@triton.jit
def _logprob_entropy_fwd_kernel(
    logits_ptr,
    labels_ptr,
    logprob_ptr,
    entropy_ptr,
    lse_ptr,
    n_rows,
    vocab_size,
    stride_row,
    inv_temperature,
    BLOCK_V: tl.constexpr,
):
    pid = tl.program_id(0)
    num_progs = tl.num_programs(0)
    # persistent loop: each program walks rows pid, pid + num_progs, ...
    for row in range(pid, n_rows, num_progs):
        row_ptr = logits_ptr + row.to(tl.int64) * stride_row
        label = tl.load(labels_ptr + row)

        m = -float("inf")
        s = 0.0
        t = 0.0
        for start in range(0, vocab_size, BLOCK_V):
            offs = start + tl.arange(0, BLOCK_V)
            mask = offs < vocab_size
            x = tl.load(row_ptr + offs, mask=mask, other=-float("inf")).to(tl.float32) * inv_temperature
            new_m = tl.maximum(m, tl.max(x, axis=0))
            scale = tl.exp(m - new_m)
            p = tl.exp(x - new_m)
            p = tl.where(mask, p, 0.0)
            s = s * scale + tl.sum(p, axis=0)
            t = t * scale + tl.sum(tl.where(mask, p * x, 0.0), axis=0)
            m = new_m

        lse = m + tl.log(s)
        x_label = tl.load(row_ptr + label).to(tl.float32) * inv_temperature
        tl.store(logprob_ptr + row, x_label - lse)
        tl.store(entropy_ptr + row, lse - t / s)
        tl.store(lse_ptr + row, lse)


@triton.jit
def _logprob_bwd_kernel(
    logits_ptr,
    labels_ptr,
    grad_logprob_ptr,
    lse_ptr,
    grad_logits_ptr,
    vocab_size,
    stride_row,
    inv_temperature,
    BLOCK_V: tl.constexpr,
):
    row = tl.program_id(0)
    row_ptr = logits_ptr + row.to(tl.int64) * stride_row
    grad_row_ptr = grad_logits_ptr + row.to(tl.int64) * stride_row
    label = tl.load(labels_ptr + row)
    g = tl.load(grad_logprob_ptr + row)
    lse = tl.load(lse_ptr + row)
    for start in range(0, vocab_size, BLOCK_V):
        offs = start + tl.arange(0, BLOCK_V)
        mask = offs < vocab_size
        x = tl.load(row_ptr + offs, mask=mask, other=0.0).to(tl.float32) * inv_temperature
        p = tl.exp(x - lse)
        grad = tl.where(offs == label, 1.0 - p, -p) * g * inv_temperature
        tl.store(grad_row_ptr + offs, grad.to(grad_logits_ptr.dtype.element_ty), mask=mask)


class _FusedLogprobEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits: torch.Tensor, labels: torch.Tensor, temperature: float):
        assert logits.is_cuda, "fused logprob kernel expects CUDA tensors"
        assert logits.dim() == 2 and logits.stride(-1) == 1
        n_rows, vocab_size = logits.shape
        logprob = torch.empty(n_rows, dtype=torch.float32, device=logits.device)
        entropy = torch.empty_like(logprob)
        lse = torch.empty_like(logprob)

        num_sms = _get_num_sms(logits.device)
        grid = (min(n_rows, num_sms * 4),)
        with torch.cuda.device(logits.device):
            _logprob_entropy_fwd_kernel[grid](
                logits,
                labels,
                logprob,
                entropy,
                lse,
                n_rows,
                vocab_size,
                logits.stride(0),
                1.0 / temperature,
            )
        ctx.save_for_backward(logits, labels, lse)
        ctx.temperature = temperature
        return logprob, entropy

    @staticmethod
    def backward(ctx, grad_logprob: torch.Tensor, grad_entropy: Optional[torch.Tensor]):
        logits, labels, lse = ctx.saved_tensors
        n_rows, vocab_size = logits.shape
        grad_logits = torch.empty_like(logits)
        _logprob_bwd_kernel[(n_rows,)](
            logits,
            labels,
            grad_logprob.contiguous(),
            lse,
            grad_logits,
            vocab_size,
            logits.stride(0),
            1.0 / ctx.temperature,
            BLOCK_V=4096,
            num_warps=16,
        )
        # entropy is only used as a metric / bonus without gradient in our recipes
        return grad_logits, None, None


def fused_logprob_entropy(logits: torch.Tensor, labels: torch.Tensor, temperature: float = 1.0) -> Tuple[torch.Tensor, torch.Tensor]:
    """Return (log_prob[label], entropy) per row of ``logits`` without materialising log_softmax."""
    shape = logits.shape[:-1]
    logits = logits.reshape(-1, logits.shape[-1]).contiguous()
    labels = labels.reshape(-1).contiguous()
    logprob, entropy = _FusedLogprobEntropy.apply(logits, labels, temperature)
    return logprob.view(shape), entropy.view(shape)


def reference_logprob_entropy(logits: torch.Tensor, labels: torch.Tensor, temperature: float = 1.0):
    """Eager reference used by the unit test and as a fallback on CPU."""
    logits = logits.float() / temperature
    logp = torch.log_softmax(logits, dim=-1)
    logprob = logp.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    entropy = -(logp.exp() * logp).sum(-1)
    return logprob, entropy
