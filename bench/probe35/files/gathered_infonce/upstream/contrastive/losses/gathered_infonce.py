"""
InfoNCE with cross-device negatives for bi-encoder training.

* ``AllGather`` gathers query / passage embeddings from every rank and routes the gradient of the
  local slice back (the usual GatherLayer trick from SimCLR / CLIP codebases).
* ``ChunkedLogSumExp`` computes logsumexp over a (B, N) score matrix that is too large to keep,
  recomputing the scores chunk by chunk in backward; it always runs in fp32 even under autocast.
"""
from typing import Optional, Tuple

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import custom_bwd, custom_fwd


class AllGather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor: torch.Tensor) -> torch.Tensor:
        ctx.rank = dist.get_rank()
        ctx.world_size = dist.get_world_size()
        ctx.local_batch = tensor.shape[0]
        out = [torch.empty_like(tensor) for _ in range(ctx.world_size)]
        dist.all_gather(out, tensor.contiguous())
        return torch.cat(out, dim=0)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor) -> torch.Tensor:
        grad = grad_output.contiguous()
        dist.all_reduce(grad, op=dist.ReduceOp.SUM)
        start = ctx.rank * ctx.local_batch
        return grad[start : start + ctx.local_batch]


def all_gather_with_grad(t: torch.Tensor) -> torch.Tensor:
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return t
    return AllGather.apply(t)


class ChunkedLogSumExp(torch.autograd.Function):
    """logsumexp_j (q_i . p_j / tau) without materialising the full (B, N) matrix for backward."""

    @staticmethod
    @custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, q: torch.Tensor, p: torch.Tensor, inv_tau: float, chunk: int) -> torch.Tensor:
        lse = torch.full((q.shape[0],), float("-inf"), device=q.device, dtype=torch.float32)
        for s in range(0, p.shape[0], chunk):
            scores = (q @ p[s : s + chunk].T) * inv_tau
            lse = torch.logaddexp(lse, torch.logsumexp(scores, dim=1))
        ctx.save_for_backward(q, p, lse)
        ctx.inv_tau, ctx.chunk = inv_tau, chunk
        return lse

    @staticmethod
    @custom_bwd
    def backward(ctx, grad_lse: torch.Tensor) -> Tuple[Optional[torch.Tensor], ...]:
        q, p, lse = ctx.saved_tensors
        grad_q = torch.zeros_like(q)
        grad_p = torch.zeros_like(p)
        for s in range(0, p.shape[0], ctx.chunk):
            pc = p[s : s + ctx.chunk]
            probs = torch.exp((q @ pc.T) * ctx.inv_tau - lse[:, None])  # softmax slice
            w = probs * grad_lse[:, None] * ctx.inv_tau
            grad_q += w @ pc
            grad_p[s : s + ctx.chunk] = w.T @ q
        return grad_q, grad_p, None, None


class GatheredInfoNCE(nn.Module):
    def __init__(self, temperature: float = 0.02, chunk_size: int = 8192, gather: bool = True,
                 symmetric: bool = False):
        super().__init__()
        self.temperature = temperature
        self.chunk_size = chunk_size
        self.gather = gather
        self.symmetric = symmetric

    def forward(self, q: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        """
        q: (B, d) query embeddings, p: (B * n_psg, d) passages; passage i * n_psg is the positive of query i.
        """
        q = F.normalize(q, dim=-1)
        p = F.normalize(p, dim=-1)
        if self.gather:
            q = all_gather_with_grad(q)
            p = all_gather_with_grad(p)

        n_psg = p.shape[0] // q.shape[0]
        pos = p[::n_psg]
        inv_tau = 1.0 / self.temperature

        pos_scores = (q.float() * pos.float()).sum(-1) * inv_tau
        lse = ChunkedLogSumExp.apply(q, p, inv_tau, self.chunk_size)
        loss = (lse - pos_scores).mean()

        if self.symmetric:
            lse_p = ChunkedLogSumExp.apply(pos, q, inv_tau, self.chunk_size)
            loss = 0.5 * (loss + (lse_p - pos_scores).mean())
        return loss


def _check_against_reference(device: str = "cuda") -> None:
    """Quick self-test of the chunked loss against the dense formulation."""
    torch.manual_seed(0)
    q = torch.randn(64, 128, device=device, requires_grad=True)
    p = torch.randn(256, 128, device=device, requires_grad=True)
    loss_fn = GatheredInfoNCE(temperature=0.05, chunk_size=37, gather=False)
    loss = loss_fn(q, p)
    loss.backward()
    g_q, g_p = q.grad.clone(), p.grad.clone()

    q.grad = p.grad = None
    qn, pn = F.normalize(q, dim=-1), F.normalize(p, dim=-1)
    scores = qn @ pn.T / 0.05
    ref = F.cross_entropy(scores, torch.arange(64, device=device) * 4)
    ref.backward()
    torch.testing.assert_close(loss, ref, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(q.grad, g_q, rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(p.grad, g_p, rtol=1e-3, atol=1e-4)


if __name__ == "__main__":
    _check_against_reference()
    print("ok")
