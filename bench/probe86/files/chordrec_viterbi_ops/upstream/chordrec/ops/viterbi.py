"""HMM / CRF Viterbi decoding for chord sequences.

Frame-wise chord posteriors from the acoustic model are smoothed with a chord-transition HMM
(self-transition heavy).  Decoding a whole dataset song-by-song in Python is the bottleneck of
evaluation, so the forward max-product pass runs in a small CUDA extension (``csrc/viterbi.cpp``
+ ``csrc/viterbi_kernel.cu``): one thread block per song, one thread per chord state.

The extension is normally built by ``setup.py`` (``chordrec._viterbi_cuda``); when working from a
source checkout it is JIT-compiled on first import.
"""
import os
import warnings

import torch
from torch.autograd import Function

_here = os.path.dirname(os.path.abspath(__file__))
_src = os.path.join(_here, "..", "csrc")

try:
    from chordrec import _viterbi_cuda as _C
except ImportError:
    from torch.utils.cpp_extension import load

    warnings.warn("chordrec._viterbi_cuda not built, JIT compiling (this takes a minute) ...")
    _C = load(
        name="viterbi_cuda",
        sources=[os.path.join(_src, "viterbi.cpp"), os.path.join(_src, "viterbi_kernel.cu")],
        extra_cflags=["-O3"],
        extra_cuda_cflags=["-O3", "--use_fast_math", "-lineinfo"],
        verbose=False,
    )


def _viterbi_torch(log_probs, log_trans, log_init, lengths):
    """Reference implementation (B, T, K) -> (B, T) best paths. Slow: Python loop over time."""
    B, T, K = log_probs.shape
    delta = log_init[None, :] + log_probs[:, 0]
    backptr = torch.empty(B, T, K, dtype=torch.long, device=log_probs.device)
    for t in range(1, T):
        scores = delta[:, :, None] + log_trans[None]          # (B, K_prev, K)
        best, arg = scores.max(dim=1)
        new_delta = best + log_probs[:, t]
        active = (t < lengths)[:, None]
        delta = torch.where(active, new_delta, delta)
        backptr[:, t] = torch.where(active, arg, torch.arange(K, device=arg.device)[None, :])
    paths = torch.empty(B, T, dtype=torch.long, device=log_probs.device)
    state = delta.argmax(dim=-1)
    for t in range(T - 1, -1, -1):
        paths[:, t] = state
        if t > 0:
            state = backptr[:, t].gather(1, state[:, None]).squeeze(1)
    return paths


class ViterbiDecode(Function):
    """Not differentiable; wrapped in a Function so it can be called under autocast / jit trace."""

    @staticmethod
    def forward(ctx, log_probs, log_trans, log_init, lengths):
        log_probs = log_probs.contiguous().float()
        log_trans = log_trans.contiguous().float()
        log_init = log_init.contiguous().float()
        lengths = lengths.to(device=log_probs.device, dtype=torch.int32).contiguous()
        if log_probs.is_cuda:
            paths, = _C.forward(log_probs, log_trans, log_init, lengths)
            return paths.long()
        return _viterbi_torch(log_probs, log_trans, log_init, lengths.long())

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("Viterbi decoding has no gradient")


def viterbi_decode(log_probs, log_trans, log_init=None, lengths=None):
    """log_probs: (B, T, K) frame log-posteriors; log_trans: (K, K); returns (B, T) chord ids."""
    B, T, K = log_probs.shape
    if log_init is None:
        log_init = torch.full((K,), -float(torch.log(torch.tensor(float(K)))), device=log_probs.device)
    if lengths is None:
        lengths = torch.full((B,), T, dtype=torch.int32)
    return ViterbiDecode.apply(log_probs, log_trans, log_init, lengths)


def make_self_transition(num_chords, p_self=0.9, device=None):
    """Uniform off-diagonal HMM transition matrix in log domain."""
    off = (1.0 - p_self) / (num_chords - 1)
    trans = torch.full((num_chords, num_chords), off, device=device)
    trans.fill_diagonal_(p_self)
    return trans.log()


class ChordHMMSmoother(torch.nn.Module):
    def __init__(self, num_chords, p_self=0.9):
        super().__init__()
        self.register_buffer("log_trans", make_self_transition(num_chords, p_self))

    @torch.no_grad()
    def forward(self, logits, lengths=None):
        return viterbi_decode(torch.log_softmax(logits.float(), dim=-1), self.log_trans,
                              lengths=lengths)


if __name__ == "__main__":
    torch.manual_seed(0)
    B, T, K = 4, 500, 25
    logits = torch.randn(B, T, K, device="cuda")
    lengths = torch.tensor([500, 420, 300, 10])
    smoother = ChordHMMSmoother(K).cuda()
    fast = smoother(logits, lengths)
    ref = _viterbi_torch(torch.log_softmax(logits, -1), smoother.log_trans,
                         torch.full((K,), -float(torch.log(torch.tensor(float(K)))), device="cuda"),
                         lengths.cuda())
    for b in range(B):
        n = int(lengths[b])
        assert torch.equal(fast[b, :n], ref[b, :n]), b
    print("ok: CUDA Viterbi matches reference")
