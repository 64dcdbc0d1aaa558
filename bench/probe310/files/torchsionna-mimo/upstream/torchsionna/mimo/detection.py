#
# torchsionna -- a PyTorch port of selected NVIDIA Sionna link-level components.
# SPDX-License-Identifier: Apache-2.0
#
"""MIMO detectors: LMMSE equaliser, zero-forcing, and a max-log APP demapper
on top of them (port of ``sionna.mimo.lmmse_equalizer`` / ``zf_equalizer`` /
``LinearDetector``).

Shapes (Sionna convention):
    y : [..., M]        received signal (complex)
    h : [..., M, K]     channel matrix (complex)
    s : [..., M, M]     noise covariance (complex, Hermitian)
"""
import torch
import torch.nn as nn

from torchsionna import config
from torchsionna.mapping import Constellation, Demapper

# cuSOLVER is much faster than MAGMA for the batched small (<= 16x16) matrices we invert
if torch.cuda.is_available():
    torch.backends.cuda.preferred_linalg_library("cusolver")


def whiten_channel(y, h, s, return_s=True):
    """Whiten y and h with the noise covariance s: y <- S^{-1/2} y, h <- S^{-1/2} h."""
    l = torch.linalg.cholesky(s)
    y_w = torch.linalg.solve_triangular(l, y.unsqueeze(-1), upper=False).squeeze(-1)
    h_w = torch.linalg.solve_triangular(l, h, upper=False)
    if return_s:
        eye = torch.eye(s.shape[-1], dtype=s.dtype, device=s.device).expand_as(s)
        return y_w, h_w, eye
    return y_w, h_w


def lmmse_equalizer(y, h, s, whiten_interference=True):
    r"""LMMSE equalisation.

    x_hat = diag(G H)^{-1} G y with G = H^H (H H^H + S)^{-1};
    returns (x_hat, no_eff) where no_eff is the post-equalisation noise variance.
    """
    if not whiten_interference:
        g = torch.linalg.solve(h @ h.mH + s, h).mH  # [..., K, M]
    else:
        y, h = whiten_channel(y, h, s, return_s=False)
        k = h.shape[-1]
        eye = torch.eye(k, dtype=h.dtype, device=h.device)
        a = h.mH @ h + eye
        g = torch.linalg.inv(a) @ h.mH
    gh = g @ h
    d = torch.diagonal(gh, dim1=-2, dim2=-1)
    x_hat = (g @ y.unsqueeze(-1)).squeeze(-1) / d
    one = torch.ones((), dtype=d.real.dtype, device=d.device)
    no_eff = one / d.real - one
    return x_hat, no_eff


def zf_equalizer(y, h, s):
    r"""Zero-forcing: x_hat = (H^H H)^{-1} H^H y."""
    g = torch.linalg.pinv(h)
    x_hat = (g @ y.unsqueeze(-1)).squeeze(-1)
    r = g @ s @ g.mH
    no_eff = torch.diagonal(r, dim1=-2, dim2=-1).real
    return x_hat, no_eff


def mf_equalizer(y, h, s):
    r"""Matched filter: x_hat = diag(H^H H)^{-1} H^H y."""
    hh = h.mH
    d = torch.sum(h.real ** 2 + h.imag ** 2, dim=-2)
    x_hat = (hh @ y.unsqueeze(-1)).squeeze(-1) / d
    g = hh / d.unsqueeze(-1)
    r = g @ s @ g.mH
    no_eff = torch.diagonal(r, dim1=-2, dim2=-1).real - 1.0 + 1.0  # keep dtype
    return x_hat, no_eff


class LinearDetector(nn.Module):
    """Linear equaliser followed by per-stream soft demapping."""

    def __init__(self, equalizer, output, demapping_method, constellation_type=None,
                 num_bits_per_symbol=None, constellation=None, hard_out=False, dtype=None):
        super().__init__()
        self.output = output
        self.hard_out = hard_out
        eqs = {"lmmse": lmmse_equalizer, "zf": zf_equalizer, "mf": mf_equalizer}
        self.equalizer = eqs[equalizer] if isinstance(equalizer, str) else equalizer
        if constellation is None:
            constellation = Constellation(constellation_type, num_bits_per_symbol, dtype=dtype or config.cdtype)
        self.constellation = constellation
        self.demapper = Demapper(demapping_method, constellation=constellation, hard_out=hard_out)

    def forward(self, y, h, s):
        x_hat, no_eff = self.equalizer(y, h, s)
        return self.demapper(x_hat, no_eff)


class MaximumLikelihoodDetector(nn.Module):
    """Exhaustive-search ML detection (only for small K and low-order QAM).

    All |C|^K candidate vectors are enumerated once and kept on the device.
    """

    def __init__(self, num_streams, constellation, hard_out=False, device=None):
        super().__init__()
        self.k = num_streams
        self.hard_out = hard_out
        pts = constellation.points
        n = pts.numel()
        grids = torch.meshgrid(*[torch.arange(n)] * num_streams, indexing="ij")
        idx = torch.stack([g.reshape(-1) for g in grids], dim=-1)  # [n^K, K]
        self.register_buffer("cand", pts[idx])  # [n^K, K] complex
        self.register_buffer("cand_idx", idx)
        self.num_points = n
        if device is not None:
            self.to(device)

    def forward(self, y, h, s):
        y_w, h_w = whiten_channel(y, h, s, return_s=False)
        # distances for every candidate: || y - H x ||^2  -> [..., n^K]
        hx = torch.einsum("...mk,ck->...cm", h_w, self.cand)
        d = (y_w.unsqueeze(-2) - hx)
        dist = (d.real ** 2 + d.imag ** 2).sum(-1)
        if self.hard_out:
            best = dist.argmin(dim=-1)
            return self.cand_idx[best]
        # max-log symbol logits per stream
        logits = []
        for k in range(self.k):
            per_sym = []
            for p in range(self.num_points):
                mask = self.cand_idx[:, k] == p
                per_sym.append((-dist[..., mask]).amax(dim=-1))
            logits.append(torch.stack(per_sym, dim=-1))
        return torch.stack(logits, dim=-2)  # [..., K, num_points]


class KBestDetector(nn.Module):
    """K-Best sphere-decoder approximation on the real-valued equivalent model.

    The channel is QR-decomposed once per batch; the tree is searched layer by
    layer keeping the `k` best partial candidates.
    """

    def __init__(self, num_streams, k, constellation, hard_out=True):
        super().__init__()
        self.num_streams = num_streams
        self.k = k
        self.hard_out = hard_out
        pts = constellation.points
        self.register_buffer("pam", torch.unique(pts.real))  # per real dimension
        self.num_pam = self.pam.numel()

    @staticmethod
    def complex2real(y, h):
        yr = torch.cat([y.real, y.imag], dim=-1)
        hr = torch.cat([torch.cat([h.real, -h.imag], dim=-1),
                        torch.cat([h.imag, h.real], dim=-1)], dim=-2)
        return yr, hr

    def forward(self, y, h, s):
        y_w, h_w = whiten_channel(y, h, s, return_s=False)
        yr, hr = self.complex2real(y_w, h_w)
        q, r = torch.linalg.qr(hr)
        z = (q.transpose(-2, -1) @ yr.unsqueeze(-1)).squeeze(-1)  # [..., 2K]
        n = r.shape[-1]
        batch_shape = z.shape[:-1]
        z = z.reshape(-1, n)
        r = r.reshape(-1, n, n)
        bsz = z.shape[0]
        paths = torch.zeros(bsz, 1, 0, device=z.device, dtype=z.dtype)
        metric = torch.zeros(bsz, 1, device=z.device, dtype=z.dtype)
        for lvl in range(n - 1, -1, -1):
            cand = self.pam.view(1, 1, -1).expand(bsz, paths.shape[1], -1)
            # interference of already-detected (lower) layers
            if paths.shape[-1] > 0:
                interf = (r[:, lvl, lvl + 1:].unsqueeze(1) * paths).sum(-1, keepdim=True)
            else:
                interf = torch.zeros_like(metric).unsqueeze(-1)
            dist = (z[:, lvl].view(-1, 1, 1) - interf - r[:, lvl, lvl].view(-1, 1, 1) * cand) ** 2
            new_metric = (metric.unsqueeze(-1) + dist).reshape(bsz, -1)
            kk = min(self.k, new_metric.shape[-1])
            metric, best = torch.topk(new_metric, kk, dim=-1, largest=False)
            parent = best // self.num_pam
            sym = self.pam[best % self.num_pam]
            paths = torch.gather(paths, 1, parent.unsqueeze(-1).expand(-1, -1, paths.shape[-1]))
            paths = torch.cat([sym.unsqueeze(-1), paths], dim=-1)
        x_r = paths[:, 0]  # best candidate [B, 2K]
        x = torch.complex(x_r[:, :n // 2], x_r[:, n // 2:])
        return x.reshape(*batch_shape, n // 2)


@torch.no_grad()
def benchmark_equalizers(batch=4096, m=16, k=8, iters=50):
    """Time the three linear equalisers on the current device (prints ms / call)."""
    dev = config.device
    h = torch.randn(batch, m, k, dtype=torch.complex64, device=dev)
    y = torch.randn(batch, m, dtype=torch.complex64, device=dev)
    s = 0.1 * torch.eye(m, dtype=torch.complex64, device=dev).expand(batch, m, m).contiguous()
    for name, fn in (("lmmse", lmmse_equalizer), ("zf", zf_equalizer), ("mf", mf_equalizer)):
        fn(y, h, s)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn(y, h, s)
        end.record()
        torch.cuda.synchronize()
        print("%-6s %.3f ms" % (name, start.elapsed_time(end) / iters))
