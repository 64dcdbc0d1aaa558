"""Pure-PyTorch transducer (RNN-T) and CTC losses.

No k2, no warp-transducer: the RNN-T negative log-likelihood is computed with
an anti-diagonal alpha/beta recursion in log space and the gradient w.r.t. the
joint logits is written in closed form (Graves 2012, eq. 15-16), so the
(B, T, U+1, V) tensor is never kept around for autograd.

The forward/backward run in fp32 whatever the autocast state is; the joint
network itself can stay in half precision.
"""

import logging
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)

_NEG_INF = float("-inf")


def _gather_blank_and_labels(log_probs, labels, blank):
    """log_probs: (B, T, U+1, V); labels: (B, U) -> blank (B,T,U+1), emit (B,T,U)."""
    B, T, U1, V = log_probs.shape
    blank_lp = log_probs[..., blank]
    index = labels.long().unsqueeze(1).expand(B, T, U1 - 1).unsqueeze(-1)
    emit_lp = torch.gather(log_probs[:, :, :-1, :], 3, index).squeeze(-1)
    return blank_lp, emit_lp


def _alphas(blank_lp, emit_lp):
    """Forward variables, one anti-diagonal (t + u = n) at a time."""
    B, T, U1 = blank_lp.shape
    device = blank_lp.device
    alphas = blank_lp.new_full((B, T, U1), _NEG_INF)
    alphas[:, 0, 0] = 0.0
    for n in range(1, T + U1 - 1):
        t = torch.arange(max(0, n - U1 + 1), min(n, T - 1) + 1, device=device)
        u = n - t
        tp = (t - 1).clamp(min=0)
        up = (u - 1).clamp(min=0)
        from_blank = torch.where(
            t > 0, alphas[:, tp, u] + blank_lp[:, tp, u], blank_lp.new_tensor(_NEG_INF)
        )
        from_emit = torch.where(
            u > 0, alphas[:, t, up] + emit_lp[:, t, up], blank_lp.new_tensor(_NEG_INF)
        )
        alphas[:, t, u] = torch.logaddexp(from_blank, from_emit)
    return alphas


def _betas(blank_lp, emit_lp, act_lens, label_lens):
    """Backward variables; each utterance starts from its own (T_b - 1, U_b)."""
    B, T, U1 = blank_lp.shape
    device = blank_lp.device
    betas = blank_lp.new_full((B, T, U1), _NEG_INF)
    b_idx = torch.arange(B, device=device)
    t_last = act_lens.long() - 1
    u_last = label_lens.long()
    betas[b_idx, t_last, u_last] = blank_lp[b_idx, t_last, u_last]
    for n in range(T + U1 - 3, -1, -1):
        t = torch.arange(max(0, n - U1 + 1), min(n, T - 1) + 1, device=device)
        u = n - t
        tn = (t + 1).clamp(max=T - 1)
        un = (u + 1).clamp(max=U1 - 1)
        ue = u.clamp(max=U1 - 2)
        to_blank = torch.where(
            (t + 1 < T).unsqueeze(0) & (t.unsqueeze(0) < t_last.unsqueeze(1)),
            betas[:, tn, u] + blank_lp[:, t, u],
            blank_lp.new_tensor(_NEG_INF),
        )
        to_emit = torch.where(
            (u + 1 < U1).unsqueeze(0) & (u.unsqueeze(0) < u_last.unsqueeze(1)),
            betas[:, t, un] + emit_lp[:, t, ue],
            blank_lp.new_tensor(_NEG_INF),
        )
        keep = (t.unsqueeze(0) == t_last.unsqueeze(1)) & (u.unsqueeze(0) == u_last.unsqueeze(1))
        betas[:, t, u] = torch.where(keep, betas[:, t, u], torch.logaddexp(to_blank, to_emit))
    return betas


class _TransducerLoss(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(ctx, logits, labels, act_lens, label_lens, blank, reduction, clamp):
        torch.cuda.nvtx.range_push("rnnt_loss_fwd")
        log_probs = logits.log_softmax(dim=-1)
        blank_lp, emit_lp = _gather_blank_and_labels(log_probs, labels, blank)

        with torch.no_grad():
            alphas = _alphas(blank_lp, emit_lp)
            betas = _betas(blank_lp, emit_lp, act_lens, label_lens)

        B = logits.size(0)
        b_idx = torch.arange(B, device=logits.device)
        t_last = act_lens.long() - 1
        u_last = label_lens.long()
        log_like = alphas[b_idx, t_last, u_last] + blank_lp[b_idx, t_last, u_last]
        costs = -log_like

        # closed-form gradient w.r.t. the logits
        probs = log_probs.exp()
        occupancy = (alphas + betas - log_like.view(B, 1, 1)).exp()  # (B, T, U+1)
        grads = probs * occupancy.unsqueeze(-1)

        T, U1 = alphas.size(1), alphas.size(2)
        next_blank = torch.cat(
            [betas[:, 1:, :], betas.new_full((B, 1, U1), _NEG_INF)], dim=1
        )
        blank_term = (alphas + blank_lp + next_blank - log_like.view(B, 1, 1)).exp()
        final = torch.zeros_like(blank_term)
        final[b_idx, t_last, u_last] = (
            alphas[b_idx, t_last, u_last] + blank_lp[b_idx, t_last, u_last] - log_like
        ).exp()
        grads[..., blank] -= blank_term + final

        next_emit = betas[:, :, 1:]
        emit_term = (alphas[:, :, :-1] + emit_lp + next_emit - log_like.view(B, 1, 1)).exp()
        index = labels.long().unsqueeze(1).expand(B, T, U1 - 1).unsqueeze(-1)
        grads[:, :, :-1, :].scatter_add_(3, index, -emit_term.unsqueeze(-1))

        if clamp > 0:
            grads = grads.clamp(min=-clamp, max=clamp)

        if reduction == "mean":
            costs = costs.mean()
            grads = grads / B
        elif reduction == "sum":
            costs = costs.sum()
        torch.cuda.nvtx.range_pop()

        ctx.save_for_backward(grads)
        ctx.reduction = reduction
        return costs

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, grad_output):
        (grads,) = ctx.saved_tensors
        if ctx.reduction == "none":
            grad_output = grad_output.view(-1, 1, 1, 1)
        return grads * grad_output, None, None, None, None, None, None


class TransducerLoss(nn.Module):
    """RNN-T loss on (B, T, U+1, V) joint logits.

    Args:
        blank: index of the blank symbol.
        reduction: "mean", "sum" or "none".
        clamp: if > 0, clamp the gradient of the joint tensor to [-clamp, clamp].
    """

    def __init__(self, blank: int = 0, reduction: str = "mean", clamp: float = -1.0):
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"unknown reduction {reduction}")
        self.blank = blank
        self.reduction = reduction
        self.clamp = clamp

    def forward(self, logits, labels, act_lens, label_lens):
        # lengths live next to the logits; no host round trip per utterance
        act_lens = act_lens.to(logits.device)
        label_lens = label_lens.to(logits.device)
        labels = labels.to(logits.device)
        if not logits.is_contiguous():
            logits = logits.contiguous()
        return _TransducerLoss.apply(
            logits, labels, act_lens, label_lens, self.blank, self.reduction, self.clamp
        )


def ctc_loss_fp32(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=True):
    """CTC on (T, B, V) log-probs, always evaluated in fp32 outside of autocast."""
    with torch.cuda.amp.autocast(enabled=False):
        loss = F.ctc_loss(
            log_probs.float(),
            targets,
            input_lengths,
            target_lengths,
            blank=blank,
            reduction="sum",
            zero_infinity=zero_infinity,
        )
    return loss / log_probs.size(1)


class JointCTCTransducerLoss(nn.Module):
    """Weighted sum of the transducer loss and an auxiliary CTC loss on the encoder."""

    def __init__(self, vocab_size: int, enc_dim: int, blank: int = 0, ctc_weight: float = 0.3):
        super().__init__()
        self.transducer = TransducerLoss(blank=blank, reduction="mean")
        self.ctc_proj = nn.Linear(enc_dim, vocab_size)
        self.ctc_weight = ctc_weight
        self.blank = blank

    def forward(self, joint_logits, enc_out, labels, act_lens, label_lens):
        rnnt = self.transducer(joint_logits, labels, act_lens, label_lens)
        if self.ctc_weight <= 0:
            return rnnt, {"rnnt": rnnt.detach()}
        ctc_lp = self.ctc_proj(enc_out).log_softmax(dim=-1).transpose(0, 1)
        flat_targets = torch.cat([labels[b, : label_lens[b]] for b in range(labels.size(0))])
        ctc = ctc_loss_fp32(ctc_lp, flat_targets, act_lens, label_lens, blank=self.blank)
        loss = (1.0 - self.ctc_weight) * rnnt + self.ctc_weight * ctc
        return loss, {"rnnt": rnnt.detach(), "ctc": ctc.detach()}
