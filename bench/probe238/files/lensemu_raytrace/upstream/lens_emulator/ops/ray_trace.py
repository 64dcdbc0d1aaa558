"""Differentiable strong-lensing forward model used to generate training data for the emulator.

Pipeline: image-plane pixel grid -> deflection (SIE + external shear + optional NFW subhalos)
-> source-plane coordinates -> Sersic source (analytic) or pixelated source (bilinear via
grid_sample) -> PSF convolution (FFT) -> noise.

The NFW subhalo deflections dominate the cost when we put O(100) subhalos in each lens, so they
run through a small custom CUDA kernel (csrc/lens_ops_kernel.cu) when it is built; a pure torch
implementation is kept for CPU / debugging and for gradient checks.
"""
import math
from typing import Optional, Tuple

import torch
import torch.nn.functional as F

try:
    import lens_ops_cuda  # built with `cd csrc && python setup.py install`
    HAS_LENS_OPS = True
except ImportError:
    lens_ops_cuda = None
    HAS_LENS_OPS = False

# Ray tracing is done in double precision: for theta_E ~ 1" and 0.05" pixels the single
# precision round-off in the SIE deflection near the core shows up as ~1e-4 residuals
# in the emulator targets, which is above the noise level of the sharpest HST systems.
RT_DTYPE = torch.float64


def make_grid(npix: int, pixscale: float, device=None, dtype=RT_DTYPE) -> Tuple[torch.Tensor, torch.Tensor]:
    """Pixel-centre coordinates in arcsec, origin at the image centre."""
    half = (npix - 1) / 2.0
    coords = (torch.arange(npix, device=device, dtype=dtype) - half) * pixscale
    y, x = torch.meshgrid(coords, coords, indexing="ij")
    return x, y


def sie_deflection(x, y, theta_e, q, phi, x0=0.0, y0=0.0, s_core=1e-4):
    """Singular isothermal ellipsoid deflection (Kormann et al. 1994 parametrisation).

    All lens parameters are broadcastable tensors of shape (B, 1, 1).
    """
    cos_phi, sin_phi = torch.cos(phi), torch.sin(phi)
    dx, dy = x - x0, y - y0
    # rotate to the lens frame
    xr = dx * cos_phi + dy * sin_phi
    yr = -dx * sin_phi + dy * cos_phi

    q = q.clamp(1e-3, 0.999)
    sq = torch.sqrt(1 - q ** 2)
    psi = torch.sqrt(q ** 2 * (s_core ** 2 + xr ** 2) + yr ** 2)
    ax_r = theta_e * torch.sqrt(q) / sq * torch.atan(sq * xr / (psi + s_core))
    ay_r = theta_e * torch.sqrt(q) / sq * torch.atanh(sq * yr / (psi + q ** 2 * s_core))

    # rotate back
    ax = ax_r * cos_phi - ay_r * sin_phi
    ay = ax_r * sin_phi + ay_r * cos_phi
    return ax, ay


def shear_deflection(x, y, gamma1, gamma2):
    return gamma1 * x + gamma2 * y, gamma2 * x - gamma1 * y


def _nfw_F(x):
    # F(x) for the NFW lensing potential, stable on both sides of x = 1
    out = torch.empty_like(x)
    lt = x < 1
    gt = x > 1
    out[lt] = torch.acosh(1 / x[lt]) / torch.sqrt(1 - x[lt] ** 2)
    out[gt] = torch.acos(1 / x[gt]) / torch.sqrt(x[gt] ** 2 - 1)
    out[~(lt | gt)] = 1.0
    return out


def _nfw_deflection_torch(x, y, ks, rs, xs, ys):
    """Reference implementation. x, y: (B, H, W); ks, rs, xs, ys: (B, N) subhalo params."""
    dx = x[:, None] - xs[..., None, None]
    dy = y[:, None] - ys[..., None, None]
    r = torch.sqrt(dx ** 2 + dy ** 2).clamp_min(1e-6)
    u = r / rs[..., None, None]
    h = torch.log(u / 2) + _nfw_F(u)
    amp = 4 * ks[..., None, None] * rs[..., None, None] * h / u
    ax = (amp * dx / r).sum(1)
    ay = (amp * dy / r).sum(1)
    return ax, ay


class NFWDeflection(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y, ks, rs, xs, ys):
        ax, ay = lens_ops_cuda.nfw_deflection_forward(
            x.contiguous(), y.contiguous(), ks.contiguous(), rs.contiguous(), xs.contiguous(), ys.contiguous()
        )
        ctx.save_for_backward(x, y, ks, rs, xs, ys)
        return ax, ay

    @staticmethod
    def backward(ctx, grad_ax, grad_ay):
        x, y, ks, rs, xs, ys = ctx.saved_tensors
        grads = lens_ops_cuda.nfw_deflection_backward(
            grad_ax.contiguous(), grad_ay.contiguous(), x, y, ks, rs, xs, ys
        )
        # no gradient w.r.t. the pixel grid
        return (None, None) + tuple(grads)


def nfw_deflection(x, y, ks, rs, xs, ys):
    if HAS_LENS_OPS and x.is_cuda:
        return NFWDeflection.apply(x, y, ks, rs, xs, ys)
    return _nfw_deflection_torch(x, y, ks, rs, xs, ys)


def sersic_b(n):
    # Ciotti & Bertin (1999) asymptotic expansion
    return 2 * n - 1 / 3 + 4 / (405 * n) + 46 / (25515 * n ** 2)


def sersic_light(xs, ys, amp, r_eff, n, q, phi, x0=0.0, y0=0.0):
    cos_phi, sin_phi = torch.cos(phi), torch.sin(phi)
    dx, dy = xs - x0, ys - y0
    xr = dx * cos_phi + dy * sin_phi
    yr = -dx * sin_phi + dy * cos_phi
    r = torch.sqrt(q * xr ** 2 + yr ** 2 / q + 1e-12)
    return amp * torch.exp(-sersic_b(n) * ((r / r_eff) ** (1 / n) - 1))


def sample_pixelated_source(src: torch.Tensor, xs: torch.Tensor, ys: torch.Tensor, src_fov: float):
    """Bilinear lookup of a pixelated source (B, 1, S, S) at source-plane positions (B, H, W)."""
    grid = torch.stack([xs, ys], dim=-1) / (src_fov / 2)  # normalise to [-1, 1]
    return F.grid_sample(src, grid.to(src.dtype), mode="bilinear", padding_mode="zeros", align_corners=True)[:, 0]


def gaussian_psf_otf(npix: int, pixscale: float, fwhm: torch.Tensor) -> torch.Tensor:
    """Optical transfer function of a Gaussian PSF, on the rfft2 grid. fwhm: (B,) arcsec."""
    sigma = fwhm / (2 * math.sqrt(2 * math.log(2)))
    ky = torch.fft.fftfreq(npix, d=pixscale, device=fwhm.device)
    kx = torch.fft.rfftfreq(npix, d=pixscale, device=fwhm.device)
    k2 = ky[:, None] ** 2 + kx[None, :] ** 2
    return torch.exp(-2 * (math.pi ** 2) * sigma[:, None, None] ** 2 * k2[None])


def convolve_psf(img: torch.Tensor, otf: torch.Tensor) -> torch.Tensor:
    return torch.fft.irfft2(torch.fft.rfft2(img) * otf, s=img.shape[-2:])


def psf_image(otf: torch.Tensor, npix: int) -> torch.Tensor:
    """Real-space PSF stamp (for plotting / the PSF channel of the emulator input)."""
    psf = torch.fft.irfft2(otf, s=(npix, npix))
    return torch.fft.fftshift(psf, dim=(-2, -1))


class LensForwardModel(torch.nn.Module):
    def __init__(self, npix=64, pixscale=0.05, upsample=2, psf_fwhm=0.1):
        super().__init__()
        self.npix = npix
        self.pixscale = pixscale
        self.upsample = upsample
        self.psf_fwhm = psf_fwhm
        x, y = make_grid(npix * upsample, pixscale / upsample)
        # buffers follow the module with .to(device)
        self.register_buffer("x", x, persistent=False)
        self.register_buffer("y", y, persistent=False)

    def forward(self, params: dict, subhalos: Optional[dict] = None, noise_sigma: float = 0.0):
        B = params["theta_e"].shape[0]
        x = self.x.expand(B, -1, -1)
        y = self.y.expand(B, -1, -1)
        p = {k: v.to(RT_DTYPE).view(B, 1, 1) for k, v in params.items()}

        ax, ay = sie_deflection(x, y, p["theta_e"], p["q"], p["phi"], p["x0"], p["y0"])
        gx, gy = shear_deflection(x, y, p["gamma1"], p["gamma2"])
        ax, ay = ax + gx, ay + gy
        if subhalos is not None:
            sx, sy = nfw_deflection(x, y, subhalos["ks"].to(RT_DTYPE), subhalos["rs"].to(RT_DTYPE),
                                    subhalos["xs"].to(RT_DTYPE), subhalos["ys"].to(RT_DTYPE))
            ax, ay = ax + sx, ay + sy

        bx, by = x - ax, y - ay
        img = sersic_light(bx, by, p["src_amp"], p["src_reff"], p["src_n"], p["src_q"], p["src_phi"],
                           p["src_x0"], p["src_y0"])
        img = img.float()

        # downsample to the detector pixels
        img = F.avg_pool2d(img[:, None], self.upsample)[:, 0]

        otf = gaussian_psf_otf(self.npix, self.pixscale,
                               torch.full((B,), self.psf_fwhm, device=img.device))
        img = convolve_psf(img, otf)
        if noise_sigma > 0:
            img = img + noise_sigma * torch.randn_like(img)
        return img
