"""Isotropic power spectra of periodic 3-D fields, computed on whatever device the field is on.

Used for the training-time diagnostics (plt_power) and by the evaluation scripts that compare
emulated and N-body density / displacement fields.
"""
import math

import torch


def power(f, f2=None, boxsize=None, dk=None, kmax=None, double=True):
    """Compute the isotropic (cross) power spectrum of periodic fields f (and f2).

    f: tensor of shape (N, C, *spatial) or (*spatial,); the spectrum of each batch element and
       channel is summed, as in the plotting code.
    Returns k, P(k), N(k) (number of modes) as 1-D tensors on the same device as f.
    """
    dim = f.dim()
    if dim < 2:
        raise ValueError('need at least 2 dims')

    spatial = f.shape[-3:] if dim >= 3 else f.shape[-2:]
    ndim = len(spatial)
    if len(set(spatial)) != 1:
        raise ValueError('only cubic boxes supported')
    N = spatial[0]
    if boxsize is None:
        boxsize = N

    # accumulate in double precision: the high-k tail spans many orders of magnitude
    if double:
        f = f.double()
        if f2 is not None:
            f2 = f2.double()

    spatial_dims = tuple(range(-ndim, 0))

    f = torch.fft.rfftn(f, dim=spatial_dims, norm='forward')
    if f2 is None:
        f2 = f
    else:
        f2 = torch.fft.rfftn(f2, dim=spatial_dims, norm='forward')

    # wave numbers: full axes with fftfreq, the last (half) axis with rfftfreq
    kfund = 2 * math.pi / boxsize
    kvec = [torch.fft.fftfreq(N, d=1. / N, dtype=f.real.dtype, device=f.device)] * (ndim - 1)
    kvec.append(torch.fft.rfftfreq(N, d=1. / N, dtype=f.real.dtype, device=f.device))
    kk = torch.stack(torch.meshgrid(*kvec, indexing='ij'), dim=0)
    kmag = kk.square().sum(dim=0).sqrt()

    # modes on the k_z = 0 and Nyquist planes are counted once, the others twice (hermitian half)
    Nmode = torch.full_like(kmag, 2, dtype=torch.int32)
    Nmode[..., 0] = 1
    if N % 2 == 0:
        Nmode[..., -1] = 1

    if dk is None:
        dk = 1.
    if kmax is None:
        kmax = N // 2
    kbin = torch.floor(kmag / dk).to(torch.int64)
    nbins = int(kmax / dk) + 1
    valid = kbin < nbins

    P = (f * f2.conj()).real
    while P.dim() > ndim:
        P = P.sum(dim=0)

    kbin = kbin[valid]
    w = Nmode[valid].to(P.dtype)

    Psum = torch.zeros(nbins, dtype=P.dtype, device=P.device)
    Psum.index_add_(0, kbin, (P[valid] * w))
    ksum = torch.zeros(nbins, dtype=P.dtype, device=P.device)
    ksum.index_add_(0, kbin, (kmag[valid] * w))
    Nsum = torch.zeros(nbins, dtype=P.dtype, device=P.device)
    Nsum.index_add_(0, kbin, w)

    keep = Nsum > 0
    k = ksum[keep] / Nsum[keep] * kfund
    Pk = Psum[keep] / Nsum[keep] * boxsize ** ndim
    Nk = Nsum[keep]

    return k, Pk, Nk


def transfer_function(out, tgt, **kwargs):
    """sqrt(P_out / P_tgt), the usual large-scale check of an emulator."""
    k, p_out, _ = power(out, **kwargs)
    _, p_tgt, _ = power(tgt, **kwargs)
    return k, (p_out / p_tgt).sqrt()


def cross_correlation(out, tgt, **kwargs):
    """r(k) = P_xy / sqrt(P_x P_y)."""
    k, p_xy, _ = power(out, tgt, **kwargs)
    _, p_x, _ = power(out, **kwargs)
    _, p_y, _ = power(tgt, **kwargs)
    return k, p_xy / (p_x * p_y).sqrt()


def shift_to_center(f):
    """Move the zero mode to the middle of every spatial axis (for plotting 2-D slices of |f_k|^2)."""
    return torch.fft.fftshift(f, dim=tuple(range(-f.dim() + 2, 0)))
