import glob
import logging
import os

import numpy as np
from PIL import Image
from scipy import special

from deepdespeckling.utils.constants import M, m

logger = logging.getLogger(__name__)


def normalize_sar_image(image: np.ndarray) -> np.ndarray:
    """Normalise a log-amplitude image to [0, 1] with the dataset-wide bounds
    (m, M) estimated on TerraSAR-X stripmap acquisitions."""
    return ((np.log(image + 1e-6) - m) / (M - m)).astype(np.float32) \
        if image.min() >= 0 else ((image - m) / (M - m)).astype(np.float32)


def denormalize_sar_image(image: np.ndarray) -> np.ndarray:
    """Inverse of normalize_sar_image; returns an amplitude image."""
    return np.exp((M - m) * np.clip(np.squeeze(image), 0, 1) + m)


def load_sar_image(image_path: str) -> np.ndarray:
    """Load a numpy or cos file."""
    if image_path.endswith(".npy"):
        return np.load(image_path)
    if image_path.endswith(".cos"):
        from deepdespeckling.utils.load_cosar import cos2mat
        return cos2mat(image_path).astype(np.float32)
    raise ValueError(f"unsupported SAR format: {image_path}")


def get_maximum_value(image: np.ndarray, threshold_factor: float = 3.0) -> float:
    """Display threshold: mean + k * std of the amplitude."""
    return np.mean(image) + threshold_factor * np.std(image)


def save_sar_image(image: np.ndarray, image_path: str, threshold: float = None) -> None:
    """Save a SAR amplitude image as a png after clipping to [0, threshold]."""
    if threshold is None:
        threshold = get_maximum_value(image)
    image = np.clip(image, 0, threshold)
    image = image / threshold * 255
    Image.fromarray(image.astype(np.uint8)).convert("L").save(image_path)


def save_real_imag_images(noisy_image: np.ndarray, save_dir: str, image_name: str,
                          threshold: float = None) -> None:
    """Save real, imaginary and amplitude views of an SLC image."""
    real = noisy_image[:, :, 0]
    imag = noisy_image[:, :, 1]
    amplitude = np.sqrt(real ** 2 + imag ** 2)
    save_sar_image(np.abs(real), os.path.join(save_dir, f"{image_name}_real.png"), threshold)
    save_sar_image(np.abs(imag), os.path.join(save_dir, f"{image_name}_imag.png"), threshold)
    save_sar_image(amplitude, os.path.join(save_dir, f"{image_name}_noisy.png"), threshold)


def symetrise_real_and_imaginary_parts(real_part: np.ndarray, imag_part: np.ndarray):
    """Symmetrise the spectrum of an SLC image.

    Sensor-specific Hamming weighting and a non-zero Doppler centroid make the
    spectrum asymmetric, which correlates the real and imaginary parts and
    breaks MERLIN's independence hypothesis.  We estimate the spectral
    envelope, re-centre it and whiten it.
    """
    S = np.fft.fftshift(np.fft.fft2(real_part + 1j * imag_part))
    p = np.zeros((S.shape[0]))
    for i in range(S.shape[0]):
        p[i] = np.mean(np.abs(S[i, :]))
    sp = p[::-1]
    c = np.real(np.fft.ifft(np.fft.fft(p) * np.conjugate(np.fft.fft(sp))))
    d1 = np.unravel_index(c.argmax(), p.shape[0])
    d1 = d1[0]
    shift_az_1 = int(round(-(d1 - 1) / 2)) % p.shape[0] + int(p.shape[0] / 2)
    p2_1 = np.roll(p, shift_az_1)
    shift_az_2 = int(round(-(d1 - 1 - p.shape[0]) / 2)) % p.shape[0] + int(p.shape[0] / 2)
    p2_2 = np.roll(p, shift_az_2)
    window = signal_window(p.shape[0])
    shift_az = shift_az_1 if np.sum(np.abs(p2_1 - window)) < np.sum(np.abs(p2_2 - window)) else shift_az_2
    S = np.roll(S, shift_az, axis=0)

    q = np.zeros((S.shape[1]))
    for j in range(S.shape[1]):
        q[j] = np.mean(np.abs(S[:, j]))
    sq = q[::-1]
    c = np.real(np.fft.ifft(np.fft.fft(q) * np.conjugate(np.fft.fft(sq))))
    d2 = np.unravel_index(c.argmax(), q.shape[0])[0]
    shift_rg = int(round(-(d2 - 1) / 2)) % q.shape[0] + int(q.shape[0] / 2)
    S = np.roll(S, shift_rg, axis=1)

    ima2 = np.fft.ifft2(np.fft.ifftshift(S))
    return np.real(ima2), np.imag(ima2)


def signal_window(n: int, alpha: float = 0.61) -> np.ndarray:
    """Generalised Hamming window used by TerraSAR-X processing."""
    k = np.arange(n)
    return alpha - (1 - alpha) * np.cos(2 * np.pi * k / (n - 1))


def list_images(images_dir: str, extensions=(".npy", ".cos", ".tiff", ".tif")) -> list:
    files = []
    for ext in extensions:
        files.extend(glob.glob(os.path.join(images_dir, f"*{ext}")))
    return sorted(files)


def speckle_enl(image: np.ndarray) -> float:
    """Equivalent number of looks of a homogeneous area (intensity image)."""
    return float(np.mean(image) ** 2 / (np.var(image) + 1e-12))


def log_amplitude_bias(looks: int = 1) -> float:
    """Bias of the log of a Gamma-distributed intensity (digamma(L) - log(L))."""
    return float(special.psi(looks) - np.log(looks))
