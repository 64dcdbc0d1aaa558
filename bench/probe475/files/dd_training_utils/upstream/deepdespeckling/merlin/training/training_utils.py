"""Helpers for MERLIN training: dataset, loss, evaluation, timing."""
import glob
import logging
import os
import time

import numpy as np
import torch
from torch.utils.data import Dataset

from deepdespeckling.utils.utils import save_sar_image

logger = logging.getLogger(__name__)


def robust_log_bounds(patches: np.ndarray, low: float = 0.001, high: float = 0.999):
    """Normalisation bounds of the log-amplitude, computed on the training set.

    Large SLC stacks have NaN no-data borders, so we use nan-aware quantiles.
    The quantiles are evaluated on the accelerator because the stacks are big.
    """
    device = "cuda" if torch.cuda.is_available() else "cpu"
    amp = torch.from_numpy(np.abs(patches[..., 0] + 1j * patches[..., 1]).astype(np.float32))
    log_amp = torch.log(amp.to(device) + 1e-6).flatten()
    # subsample: quantile does not accept more than 16M elements
    if log_amp.numel() > 16_000_000:
        idx = torch.randint(0, log_amp.numel(), (16_000_000,), device=log_amp.device)
        log_amp = log_amp[idx]
    bounds = torch.nanquantile(log_amp, torch.tensor([low, high], device=log_amp.device))
    return float(bounds[0]), float(bounds[1])


def spectral_flatness(slc: torch.Tensor) -> torch.Tensor:
    """Diagnostic: how asymmetric the azimuth spectrum of a batch of SLC
    patches (N, 2, H, W) is after symmetrisation (should be close to 0)."""
    z = torch.complex(slc[:, 0], slc[:, 1])
    spec = torch.fft.fftshift(torch.fft.fft2(z), dim=(-2, -1)).abs()
    profile = spec.mean(dim=-1)
    return (profile - profile.flip(-1)).abs().mean(dim=-1) / profile.mean(dim=-1)


class SLCPatchDataset(Dataset):
    """Pairs (input part, target part) of normalised log-amplitudes."""

    def __init__(self, patches: np.ndarray, log_min: float, log_max: float, real_to_imag: bool = False):
        self.patches = patches.astype(np.float32)
        self.log_min = log_min
        self.log_max = log_max
        self.real_to_imag = real_to_imag

    def __len__(self):
        return self.patches.shape[0]

    def _normalise(self, part: np.ndarray) -> np.ndarray:
        log_amp = np.log(np.abs(part) + 1e-6)
        return (log_amp - self.log_min) / (self.log_max - self.log_min)

    def __getitem__(self, idx):
        patch = self.patches[idx]
        if self.real_to_imag or np.random.rand() < 0.5:
            src, dst = patch[..., 0], patch[..., 1]
        else:
            src, dst = patch[..., 1], patch[..., 0]
        inp = torch.from_numpy(self._normalise(src)[None])
        target = torch.from_numpy(np.abs(dst)[None].astype(np.float32))
        return inp, target


def merlin_loss(pred_log: torch.Tensor, target_amp: torch.Tensor, log_min: float, log_max: float):
    """Negative log-likelihood of a Rayleigh-distributed amplitude given the
    predicted log-reflectivity (up to constants)."""
    log_hat = pred_log * (log_max - log_min) + log_min
    return torch.mean(2.0 * log_hat + target_amp ** 2 / torch.exp(2.0 * log_hat))


class EpochTimer:
    """Wall-clock timer for an epoch."""

    def __init__(self):
        self._t0 = None

    def start(self):
        self._t0 = time.perf_counter()

    def stop(self) -> float:
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        return time.perf_counter() - self._t0


@torch.no_grad()
def evaluate_on_folder(model, eval_dir, sample_dir, epoch, device, log_min, log_max, patch_size=256):
    """Despeckle every .npy image of eval_dir and save png previews."""
    os.makedirs(sample_dir, exist_ok=True)
    files = sorted(glob.glob(os.path.join(eval_dir, "*.npy")))
    for f in files:
        slc = np.load(f)
        h = (slc.shape[0] // 32) * 32
        w = (slc.shape[1] // 32) * 32
        slc = slc[:h, :w]
        part = np.abs(slc[..., 0])
        inp = (np.log(part + 1e-6) - log_min) / (log_max - log_min)
        inp = torch.from_numpy(inp.astype(np.float32))[None, None].to(device)
        out = model(inp).squeeze().cpu().numpy()
        amp = np.exp(out * (log_max - log_min) + log_min)
        name = os.path.splitext(os.path.basename(f))[0]
        save_sar_image(amp, os.path.join(sample_dir, f"{name}_epoch{epoch:03d}.png"))
    logger.info("evaluated %d images", len(files))
