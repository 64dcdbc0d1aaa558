"""Centered Fourier / Hartley transforms used throughout cryoDRGN.

Images are stored in real space as (N, D, D) stacks; the decoder works in "Hartley space"
(ht = Re(F) - Im(F)), which keeps everything real-valued.  All functions accept numpy arrays or torch
tensors and return the same type.
"""
import logging

import numpy as np
import torch
import torch.fft

logger = logging.getLogger(__name__)

# cuFFT keeps one plan per (shape, dtype, device); a training run only ever sees 2-3 shapes,
# but evaluation of many box sizes can blow the default cache (4096 plans) and GPU memory.
torch.backends.cuda.cufft_plan_cache.max_size = 64


def normalize(img, mean=0, std=None, std_n=None):
    if std is None:
        # Since std is a memory-intensive computation, use a subset of the data
        std = np.std(img[:std_n, ...]) if std_n is not None else img.std()
    logger.info(f"Normalized by {mean} +/- {std}")
    return (img - mean) / std


def fft2_center(img):
    """Centered 2-D FFT over the last two axes."""
    if isinstance(img, np.ndarray):
        return np.fft.fftshift(np.fft.fft2(np.fft.fftshift(img, axes=(-1, -2))), axes=(-1, -2))
    return torch.fft.fftshift(
        torch.fft.fft2(torch.fft.fftshift(img, dim=(-1, -2))), dim=(-1, -2))


def fftn_center(img):
    """Centered n-D FFT (volumes)."""
    if isinstance(img, np.ndarray):
        return np.fft.fftshift(np.fft.fftn(np.fft.fftshift(img)))
    return torch.fft.fftshift(torch.fft.fftn(torch.fft.fftshift(img)))


def ifftn_center(img):
    if isinstance(img, np.ndarray):
        img = np.fft.ifftshift(img)
        img = np.fft.ifftn(img)
        img = np.fft.ifftshift(img)
    elif isinstance(img, torch.Tensor):
        img = torch.fft.ifftshift(img)
        img = torch.fft.ifftn(img)
        img = torch.fft.ifftshift(img, dim=None)
    else:
        raise TypeError(f"ifftn_center: unsupported type {type(img)}")
    return img


def ht2_center(img):
    """Centered 2-D Hartley transform: Re(F) - Im(F)."""
    _img = fft2_center(img)
    return _img.real - _img.imag


def htn_center(img):
    _img = fftn_center(img)
    return _img.real - _img.imag


def iht2_center(img):
    img = fft2_center(img)
    img /= img.shape[-1] * img.shape[-2]
    return img.real - img.imag


def ihtn_center(img):
    img = fftn_center(img)
    img /= np.prod(img.shape)
    return img.real - img.imag


def symmetrize_ht(ht, preallocated=False):
    """Make a Hartley-space image Friedel-symmetric by appending the missing Nyquist row/column."""
    if preallocated:
        D = ht.shape[-1]
        sym_ht = ht
    else:
        if ht.ndim == 2:
            ht = ht[np.newaxis, ...]
        assert ht.ndim == 3
        D = ht.shape[-1]
        B = ht.shape[0]
        if isinstance(ht, np.ndarray):
            sym_ht = np.empty((B, D + 1, D + 1), dtype=ht.dtype)
        else:
            sym_ht = torch.empty((B, D + 1, D + 1), dtype=ht.dtype, device=ht.device)
        sym_ht[:, 0:-1, 0:-1] = ht
    assert D % 2 == 0
    sym_ht[:, -1, :] = sym_ht[:, 0, :]  # last row is the first row
    sym_ht[:, :, -1] = sym_ht[:, :, 0]  # last col is the first col
    sym_ht[:, -1, -1] = sym_ht[:, 0, 0]
    if len(sym_ht) == 1:
        sym_ht = sym_ht[0]
    return sym_ht


def fourier_ring_correlation(a, b, D=None):
    """FRC between two real-space images (torch), binned by integer radius.

    The accumulation is done in float64: the ring sums over 10^5 - 10^6 pixels lose several digits
    in float32 and the curve near the noise floor gets visibly jagged.
    """
    D = D or a.shape[-1]
    fa = fft2_center(a.to(torch.float64))
    fb = fft2_center(b.to(torch.float64))
    freqs = torch.fft.fftshift(torch.fft.fftfreq(D, device=a.device))
    fy, fx = torch.meshgrid(freqs, freqs, indexing="ij")
    r = torch.round(torch.sqrt(fx**2 + fy**2) * D).long().clamp(max=D // 2)
    num = torch.zeros(D // 2 + 1, dtype=torch.float64, device=a.device)
    den_a = torch.zeros_like(num)
    den_b = torch.zeros_like(num)
    num.index_add_(0, r.flatten(), (fa * fb.conj()).real.flatten())
    den_a.index_add_(0, r.flatten(), (fa.abs() ** 2).flatten())
    den_b.index_add_(0, r.flatten(), (fb.abs() ** 2).flatten())
    return (num / torch.sqrt(den_a * den_b).clamp_min(1e-12)).float()


def window_mask(D, in_rad, out_rad, device=None):
    """Soft circular real-space window (cosine edge between in_rad and out_rad, in units of D/2)."""
    assert D % 2 == 0
    x0, x1 = torch.meshgrid(
        torch.linspace(-1, 1, D, endpoint=False, device=device)
        if False else torch.linspace(-1, 1 - 2 / D, D, device=device),
        torch.linspace(-1, 1 - 2 / D, D, device=device),
        indexing="ij",
    )
    r = (x0**2 + x1**2)**0.5
    mask = torch.minimum(
        torch.tensor(1.0, device=device),
        torch.maximum(torch.tensor(0.0, device=device),
                      1 - (r - in_rad) / (out_rad - in_rad)))
    return mask


def clear_plan_cache():
    """Free cuFFT plans (called between box sizes in analysis scripts)."""
    torch.backends.cuda.cufft_plan_cache.clear()
