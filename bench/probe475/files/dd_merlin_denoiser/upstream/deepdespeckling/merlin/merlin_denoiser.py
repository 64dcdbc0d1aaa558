import logging

import numpy as np
import torch
from tqdm import tqdm

from deepdespeckling.denoiser import Denoiser
from deepdespeckling.model import Model
from deepdespeckling.utils.constants import M, m
from deepdespeckling.utils.utils import (denormalize_sar_image, normalize_sar_image,
                                         symetrise_real_and_imaginary_parts)

logger = logging.getLogger(__name__)


class MerlinDenoiser(Denoiser):
    """Class to denoise SAR images (SLC or amplitude) with the MERLIN framework.

    MERLIN (Dalsasso et al., 2021) exploits the statistical independence of the
    real and imaginary parts of a complex SLC image: the network is trained to
    predict one part from the other, so no clean reference is needed.
    """

    def __init__(self, model_name: str, symetrise: bool = True, **params):
        super().__init__(**params)
        self.model_name = model_name
        self.symetrise = symetrise
        self.M = M
        self.m = m

    def load_model(self, weights_path: str, patch_size: int) -> Model:
        """Load the MERLIN network for the requested acquisition mode.

        Args:
            weights_path (str): path to the .pth file
            patch_size (int): spatial size of the patches fed to the network

        Returns:
            model (Model): the network in eval mode, on self.device
        """
        model = Model(torch.device(self.device), height=patch_size, width=patch_size)
        model.load_state_dict(torch.load(weights_path, map_location=torch.device(self.device)))
        model.eval()
        return model

    def preprocess_noisy_image(self, noisy_image: np.ndarray, patch_size: int):
        """Split an SLC image (H, W, 2) in real / imaginary parts and optionally
        symmetrise its spectrum, which MERLIN expects (no zero-doppler shift)."""
        if self.symetrise:
            real_part, imag_part = symetrise_real_and_imaginary_parts(
                noisy_image[:, :, 0], noisy_image[:, :, 1])
            noisy_image = np.stack((real_part, imag_part), axis=-1)
        return super().preprocess_noisy_image(noisy_image, patch_size)

    def denoise_image_kernel(self, noisy_image, denoised_image_kernel, x, y, patch_size, model,
                             count_image=None):
        """Denoise one patch with both the real and the imaginary part as input
        and average the two estimates."""
        patch = noisy_image[x:x + patch_size, y:y + patch_size, :]

        estimates = []
        for part in range(2):
            log_amp = np.log(np.abs(patch[:, :, part]) + 1e-6)
            log_amp = normalize_sar_image(log_amp)
            tensor = torch.tensor(log_amp, dtype=torch.float32).unsqueeze(0).unsqueeze(0)
            tensor = tensor.to(self.device)
            with torch.no_grad():
                out = model(tensor)
            out = out.squeeze().cpu().numpy()
            estimates.append(denormalize_sar_image(out))

        patch_denoised = (estimates[0] + estimates[1]) / 2.0
        denoised_image_kernel[x:x + patch_size, y:y + patch_size] += patch_denoised
        count_image[x:x + patch_size, y:y + patch_size] += 1.0
        return denoised_image_kernel, count_image

    def denoise_image_batch(self, patches: list, model: Model, batch_size: int = 16) -> list:
        """Batched variant used by despeckle_from_crop on large images."""
        outputs = []
        for start in tqdm(range(0, len(patches), batch_size), desc="MERLIN patches"):
            chunk = np.stack(patches[start:start + batch_size])[:, None]
            tensor = torch.from_numpy(chunk.astype(np.float32)).to(self.device)
            with torch.no_grad():
                out = model(tensor).cpu().numpy()[:, 0]
            outputs.extend(list(out))
        # free the activations of the last batch before stitching
        torch.cuda.empty_cache()
        return outputs

    def denoise_image_amplitude(self, noisy_image: np.ndarray, weights_path: str, patch_size: int,
                                stride_size: int) -> dict:
        """Denoise a detected (amplitude only) image: there is no imaginary part,
        so the same network is applied once on the log-amplitude."""
        noisy_image = np.stack((noisy_image, noisy_image), axis=-1)
        self.symetrise = False
        result = self.denoise_image(noisy_image, weights_path, patch_size, stride_size)
        logger.info("amplitude image despeckled: %s", result["denoised"].shape)
        return result
