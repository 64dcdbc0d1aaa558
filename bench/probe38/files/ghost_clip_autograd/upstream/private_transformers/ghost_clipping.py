"""
Ghost clipping for linear layers, as a custom autograd Function.

The standard DP-SGD recipe materialises one gradient per example (B x out x in),
which is prohibitive for the large projection matrices in transformers. For a
linear layer fed a sequence, the per-example gradient norm can be computed
without ever building that tensor:

    ||G_i||_F^2 = < A_i A_i^T , B_i B_i^T >

where A_i (T x in) are the layer inputs and B_i (T x out) the output grads of
example i. This is cheap whenever T^2 < in * out.

The Function below computes the clipped, summed gradient in a second
backward pass, after the first pass has stored per-example norms.
"""

import math
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class GhostState:
    """Book-keeping shared by all ghost layers of one model."""

    def __init__(self, max_grad_norm: float, noise_multiplier: float):
        self.max_grad_norm = max_grad_norm
        self.noise_multiplier = noise_multiplier
        self.second_pass = False
        self.norm_sq: Optional[torch.Tensor] = None
        self.scale: Optional[torch.Tensor] = None

    def begin_first_pass(self):
        self.second_pass = False
        self.norm_sq = None
        self.scale = None

    def accumulate(self, per_example_sq: torch.Tensor):
        if self.norm_sq is None:
            self.norm_sq = per_example_sq
        else:
            self.norm_sq = self.norm_sq + per_example_sq

    def finish_first_pass(self):
        norms = self.norm_sq.sqrt()
        self.scale = torch.clamp_max(self.max_grad_norm / (norms + 1e-6), 1.0)
        self.second_pass = True
        return norms


def _ghost_norm_sq(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """Per-example squared Frobenius norm of A_i^T B_i without forming it."""
    if A.dim() == 2:
        return (A.pow(2).sum(-1)) * (B.pow(2).sum(-1))
    aat = torch.bmm(A, A.transpose(1, 2))
    bbt = torch.bmm(B, B.transpose(1, 2))
    return (aat * bbt).sum(dim=(1, 2))


def _instantiated_norm_sq(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """Fallback: build per-example grads explicitly (more memory, exact for any T)."""
    if A.dim() == 2:
        A = A.unsqueeze(1)
        B = B.unsqueeze(1)
    gs = torch.einsum("bto,bti->boi", B, A)
    return gs.flatten(1).pow(2).sum(-1)


def _use_ghost(A: torch.Tensor, out_features: int) -> bool:
    # The bmm-based trick wins on tensor cores when T^2 is small relative to the
    # weight. On the CPU path we always instantiate.
    if A.dim() == 2:
        return True
    T, d_in = A.shape[1], A.shape[2]
    return A.is_cuda and T * T <= d_in * out_features


class _GhostLinearFn(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd
    def forward(ctx, x, weight, bias, state: GhostState):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        ctx.state = state
        return F.linear(x, weight, bias)

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        state: GhostState = ctx.state
        grad_x = grad_out.matmul(weight.to(grad_out.dtype))

        if not state.second_pass:
            # First pass: per-example norms only, in fp32 to avoid fp16 overflow
            # of the T x T Gram matrices.
            with torch.cuda.amp.autocast(enabled=False):
                A = x.detach().float()
                B = grad_out.detach().float()
                if _use_ghost(A, weight.shape[0]):
                    sq = _ghost_norm_sq(A, B)
                else:
                    sq = _instantiated_norm_sq(A, B)
                if ctx.has_bias:
                    b_sq = B.sum(dim=1).pow(2).sum(-1) if B.dim() == 3 else B.pow(2).sum(-1)
                    sq = sq + b_sq
            state.accumulate(sq)
            return grad_x, None, None, None

        # Second pass: clipped sum of per-example grads = (scale * B)^T A
        scale = state.scale.to(grad_out.dtype)
        if grad_out.dim() == 3:
            Bs = grad_out * scale.view(-1, 1, 1)
            grad_w = torch.einsum("bto,bti->oi", Bs, x)
            grad_b = Bs.sum(dim=(0, 1)) if ctx.has_bias else None
        else:
            Bs = grad_out * scale.view(-1, 1)
            grad_w = Bs.t().matmul(x)
            grad_b = Bs.sum(0) if ctx.has_bias else None
        return grad_x, grad_w, grad_b, None


class GhostLinear(nn.Linear):
    """Drop-in nn.Linear whose backward feeds a shared GhostState."""

    def __init__(self, in_features, out_features, bias=True, state: Optional[GhostState] = None, **kw):
        super().__init__(in_features, out_features, bias=bias, **kw)
        self.state = state

    def forward(self, x):
        if self.state is None or not self.training:
            return super().forward(x)
        return _GhostLinearFn.apply(x, self.weight, self.bias, self.state)


def convert_linear_layers(model: nn.Module, state: GhostState, skip=("lm_head",)) -> nn.Module:
    for name, child in list(model.named_children()):
        if name in skip:
            continue
        if isinstance(child, nn.Linear) and not isinstance(child, GhostLinear):
            new = GhostLinear(
                child.in_features,
                child.out_features,
                bias=child.bias is not None,
                state=state,
                device=child.weight.device,
                dtype=child.weight.dtype,
            )
            new.weight = child.weight
            if child.bias is not None:
                new.bias = child.bias
            setattr(model, name, new)
        else:
            convert_linear_layers(child, state, skip)
    return model


class GhostClippingPrivacyEngine:
    """Two backward passes per step: norms first, clipped gradients second."""

    def __init__(self, model: nn.Module, optimizer, batch_size: int, max_grad_norm: float, noise_multiplier: float):
        self.model = model
        self.optimizer = optimizer
        self.batch_size = batch_size
        self.state = GhostState(max_grad_norm, noise_multiplier)
        convert_linear_layers(model, self.state)
        self.trainable = [p for p in model.parameters() if p.requires_grad]

    def step(self, loss_per_example: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        self.state.begin_first_pass()
        loss_per_example.sum().backward(retain_graph=True)
        for p in self.trainable:
            p.grad = None
        norms = self.state.finish_first_pass()

        loss_per_example.sum().backward()
        for p in self.trainable:
            if p.grad is None:
                continue
            noise = torch.normal(
                mean=0.0,
                std=self.state.noise_multiplier * self.state.max_grad_norm,
                size=p.shape,
                device=p.device,
                dtype=p.grad.dtype,
            )
            p.grad.add_(noise).div_(self.batch_size)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        return loss_per_example.mean().detach(), norms.detach()
