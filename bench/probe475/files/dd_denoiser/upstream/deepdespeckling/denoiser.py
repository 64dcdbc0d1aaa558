"""Base class shared by the MERLIN and SAR2SAR denoisers.

A Denoiser owns a trained network and knows how to cut a SAR image into
overlapping patches, run the network on each of them and stitch the result
back together.  Sub-classes only implement ``load_model`` and
``denoise_image_kernel``.
"""
import logging
import os

import numpy as np
import torch

from deepdespeckling.utils.constants import PATCH_SIZE, STRIDE_SIZE

logger = logging.getLogger(__name__)


class Denoiser:
    """Class to share parameters beyond denoising functions
    """

    def __init__(self):
        self.device = self.get_device()
        logger.info(f"Despeckling will run on {self.device}")

    def get_device(self) -> str:
        """Get torch device to use depending on gpu's availability

        Returns:
            device (str): device to be used by torch
        """
        if torch.cuda.is_available():
            device = "cuda"
        else:
            device = "cpu"

        return device

    def initialize_axis_range(self, image_axis_dim: int, patch_size: int, stride_size: int) -> list:
        """Initialize the convolution range for x or y axis

        Args:
            image_axis_dim (int): axis size
            patch_size (int): patch size
            stride_size (int): stride size

        Returns:
            axis_range (list) : pixel borders of each convolution
        """
        if image_axis_dim == patch_size:
            axis_range = list(np.array([0]))
        else:
            axis_range = list(range(0, image_axis_dim - patch_size, stride_size))
            if (axis_range[-1] + patch_size) < image_axis_dim:
                axis_range.extend(
                    range(image_axis_dim - patch_size, image_axis_dim - patch_size + 1))

        return axis_range

    def preprocess_noisy_image(self, noisy_image: np.ndarray, patch_size: int = PATCH_SIZE):
        """Pad the image with symmetric borders when it is smaller than one patch.

        Returns:
            noisy_image (np.ndarray), image_height (int), image_width (int)
        """
        image_height = noisy_image.shape[0]
        image_width = noisy_image.shape[1]

        if image_height < patch_size:
            pad_h = patch_size - image_height
            noisy_image = np.pad(noisy_image, ((0, pad_h), (0, 0), (0, 0)), mode="symmetric")
        if image_width < patch_size:
            pad_w = patch_size - image_width
            noisy_image = np.pad(noisy_image, ((0, 0), (0, pad_w), (0, 0)), mode="symmetric")

        return noisy_image, image_height, image_width

    def denoise_image_kernel(self, noisy_image_tensor: torch.tensor, denoised_image_kernel: np.array,
                             x: int, y: int, patch_size: int, model: torch.nn.Module,
                             normalisation_kernel: np.array = False):
        """Denoise one patch; implemented by the sub-classes."""
        raise NotImplementedError

    def denoise_image(self, noisy_image: np.ndarray, weights_path: str,
                      patch_size: int = PATCH_SIZE, stride_size: int = STRIDE_SIZE) -> dict:
        """Slide over the image, denoise every patch and average the overlaps."""
        if not os.path.exists(weights_path):
            raise FileNotFoundError(f"weights not found: {weights_path}")

        noisy_image, image_height, image_width = self.preprocess_noisy_image(noisy_image, patch_size)
        model = self.load_model(weights_path=weights_path, patch_size=patch_size)

        count_image = np.zeros(noisy_image.shape[:2], dtype=np.float32)
        denoised_image = np.zeros(noisy_image.shape[:2], dtype=np.float32)

        x_range = self.initialize_axis_range(noisy_image.shape[0], patch_size, stride_size)
        y_range = self.initialize_axis_range(noisy_image.shape[1], patch_size, stride_size)

        for x in x_range:
            for y in y_range:
                denoised_image, count_image = self.denoise_image_kernel(
                    noisy_image, denoised_image, x, y, patch_size, model, count_image)

        denoised_image = denoised_image / count_image
        return {"denoised": denoised_image[:image_height, :image_width]}

    def load_model(self, weights_path: str, patch_size: int):
        raise NotImplementedError
