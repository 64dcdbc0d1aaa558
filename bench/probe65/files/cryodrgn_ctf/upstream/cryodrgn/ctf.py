"""Contrast transfer function (CTF) utilities for cryoDRGN."""
import logging
import pickle
from typing import Optional

import numpy as np
import torch

logger = logging.getLogger(__name__)

CTF_FIELDS = ("D", "Apix", "dfu", "dfv", "dfang", "volt", "cs", "w", "phase_shift")


def compute_ctf(freqs: torch.Tensor, dfu: torch.Tensor, dfv: torch.Tensor, dfang: torch.Tensor,
                volt: torch.Tensor, cs: torch.Tensor, w: torch.Tensor,
                phase_shift: Optional[torch.Tensor] = None,
                scalefactor: Optional[torch.Tensor] = None, bfactor: Optional[torch.Tensor] = None
                ) -> torch.Tensor:
    """
    Compute the 2D CTF

    Input:
        freqs: Nx2 array of 2D spatial frequencies (A^-1)
        dfu: DefocusU (Angstrom)
        dfv: DefocusV (Angstrom)
        dfang: DefocusAngle (degrees)
        volt: accelerating voltage (kV)
        cs: spherical aberration (mm)
        w: amplitude contrast ratio
        phase_shift: degrees
        scalefactor : scale factor
        bfactor: envelope fcn B-factor (Angstrom^2)
    """
    # convert units
    volt = volt * 1000
    cs = cs * 10 ** 7
    dfang = dfang * np.pi / 180
    if phase_shift is None:
        phase_shift = torch.tensor(0)
    phase_shift = phase_shift * np.pi / 180

    # lam = sqrt(h^2/(2*m*e*Vr)); Vr = V + (e/(2*m*c^2))*V^2
    lam = 12.2639 / torch.sqrt(volt + 0.97845e-6 * volt ** 2)
    x = freqs[..., 0]
    y = freqs[..., 1]
    ang = torch.atan2(y, x)
    s2 = x ** 2 + y ** 2
    df = 0.5 * (dfu + dfv + (dfu - dfv) * torch.cos(2 * (ang - dfang)))
    gamma = (2 * np.pi * (-0.5 * df * lam * s2 + 0.25 * cs * lam ** 3 * s2 ** 2) - phase_shift)
    ctf = torch.sqrt(1 - w ** 2) * torch.sin(gamma) - w * torch.cos(gamma)
    if scalefactor is not None:
        ctf *= scalefactor
    if bfactor is not None:
        ctf *= torch.exp(-bfactor / 4 * s2)
    return ctf


def compute_ctf_grid(D: int, Apix: float, params: torch.Tensor, device=None) -> torch.Tensor:
    """Evaluate the CTF on the full (D, D) centered frequency grid for a batch of particles.

    params: (B, 7) [dfu, dfv, dfang, volt, cs, w, phase_shift]
    """
    device = device or params.device
    freqs_1d = torch.fft.fftshift(torch.fft.fftfreq(D, d=Apix, device=device))
    fy, fx = torch.meshgrid(freqs_1d, freqs_1d, indexing="ij")
    freqs = torch.stack([fx, fy], dim=-1).view(1, D * D, 2)
    B = params.shape[0]
    c = compute_ctf(freqs, *[params[:, i].view(B, 1) for i in range(7)])
    return c.view(B, D, D)


def print_ctf_params(params: np.ndarray) -> None:
    assert len(params) == 9
    logger.info("Image size (pix)  : {}".format(int(params[0])))
    logger.info("A/pix             : {}".format(params[1]))
    logger.info("DefocusU (A)      : {}".format(params[2]))
    logger.info("DefocusV (A)      : {}".format(params[3]))
    logger.info("Dfang (deg)       : {}".format(params[4]))
    logger.info("voltage (kV)      : {}".format(params[5]))
    logger.info("cs (mm)           : {}".format(params[6]))
    logger.info("w                 : {}".format(params[7]))
    logger.info("Phase shift (deg) : {}".format(params[8]))


def plot_ctf(D: int, Apix: float, ctf_params: np.ndarray) -> None:
    import seaborn as sns

    assert len(ctf_params) == 7
    ctf_params_torch = torch.Tensor(ctf_params)
    freqs = (
        np.stack(np.meshgrid(np.linspace(-0.5, 0.5, D, endpoint=False),
                             np.linspace(-0.5, 0.5, D, endpoint=False)), -1) / Apix
    )
    freqs = torch.tensor(freqs).view(-1, 2)
    c = compute_ctf(freqs, *ctf_params_torch)
    sns.heatmap(c.cpu().numpy().reshape(D, D))


def load_ctf_for_training(D: int, ctf_params_pkl: str) -> np.ndarray:
    assert D % 2 == 0
    with open(ctf_params_pkl, "rb") as f:
        ctf_params = pickle.load(f)
    assert ctf_params.shape[1] == 9
    # Replace original image size with current dimensions
    Apix = ctf_params[0, 0] * ctf_params[0, 1] / D
    ctf_params[:, 0] = D
    ctf_params[:, 1] = Apix
    print_ctf_params(ctf_params[0])
    # Slice out the first column (D)
    return ctf_params[:, 1:]


def wiener_filter(img_ft: torch.Tensor, ctf: torch.Tensor, snr: float = 0.1) -> torch.Tensor:
    """Phase-flip + Wiener correction in Fourier space (float64 for stability of small |CTF|)."""
    ctf64 = ctf.to(torch.float64)
    return img_ft * ctf64 / (ctf64 ** 2 + 1.0 / snr)


def load_ctf_params_star(star_path: str, D: int, Apix: float) -> np.ndarray:
    """Read CTF parameters from a RELION .star file into cryoDRGN's (N, 9) layout."""
    import starfile

    df = starfile.read(star_path)
    if isinstance(df, dict):
        optics = df.get("optics")
        df = df["particles"]
    else:
        optics = None
    n = len(df)
    out = np.zeros((n, 9), dtype=np.float32)
    out[:, 0] = D
    out[:, 1] = Apix
    out[:, 2] = df["rlnDefocusU"].to_numpy()
    out[:, 3] = df["rlnDefocusV"].to_numpy()
    out[:, 4] = df["rlnDefocusAngle"].to_numpy()
    if optics is not None and "rlnVoltage" in optics:
        out[:, 5] = float(optics["rlnVoltage"].iloc[0])
        out[:, 6] = float(optics["rlnSphericalAberration"].iloc[0])
        out[:, 7] = float(optics["rlnAmplitudeContrast"].iloc[0])
    else:
        out[:, 5] = df["rlnVoltage"].to_numpy()
        out[:, 6] = df["rlnSphericalAberration"].to_numpy()
        out[:, 7] = df["rlnAmplitudeContrast"].to_numpy()
    if "rlnPhaseShift" in df:
        out[:, 8] = df["rlnPhaseShift"].to_numpy()
    return out


def downsample_ctf_params(ctf_params: np.ndarray, D_new: int) -> np.ndarray:
    """Update image size / pixel size columns after Fourier cropping the particle stack."""
    out = ctf_params.copy()
    D_old = out[:, 0]
    out[:, 1] = out[:, 1] * D_old / D_new
    out[:, 0] = D_new
    return out


def phase_flip(img_ft: torch.Tensor, ctf: torch.Tensor) -> torch.Tensor:
    """Multiply a Fourier-space image by the sign of the CTF (phase flipping)."""
    return img_ft * torch.sign(ctf)


def ctf_envelope(s2: torch.Tensor, bfactor: float) -> torch.Tensor:
    """Gaussian B-factor envelope exp(-B s^2 / 4)."""
    return torch.exp(-bfactor / 4.0 * s2)


def ctf_zeros(dfu: float, volt: float, cs: float, w: float, n_zeros: int = 5) -> np.ndarray:
    """Spatial frequencies (1/A) of the first n CTF zeros for an isotropic defocus (numerical search)."""
    volt_v = volt * 1000
    cs_a = cs * 1e7
    lam = 12.2639 / np.sqrt(volt_v + 0.97845e-6 * volt_v**2)
    s = np.linspace(1e-4, 0.5, 20000)
    gamma = 2 * np.pi * (-0.5 * dfu * lam * s**2 + 0.25 * cs_a * lam**3 * s**4)
    c = np.sqrt(1 - w**2) * np.sin(gamma) - w * np.cos(gamma)
    idx = np.where(np.diff(np.sign(c)) != 0)[0]
    return s[idx[:n_zeros]]


def radial_average(img: torch.Tensor) -> torch.Tensor:
    """Rotational average of a centered (D, D) image; bins are integer radii."""
    D = img.shape[-1]
    y, x = torch.meshgrid(torch.arange(D, device=img.device) - D // 2,
                          torch.arange(D, device=img.device) - D // 2, indexing="ij")
    r = torch.sqrt((x**2 + y**2).float()).round().long().clamp(max=D // 2)
    out = torch.zeros(D // 2 + 1, dtype=img.dtype, device=img.device)
    cnt = torch.zeros_like(out)
    out.index_add_(0, r.flatten(), img.flatten())
    cnt.index_add_(0, r.flatten(), torch.ones_like(img).flatten())
    return out / cnt.clamp_min(1)
