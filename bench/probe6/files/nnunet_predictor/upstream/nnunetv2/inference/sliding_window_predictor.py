"""Sliding-window inference for 3-D segmentation networks (nnU-Net v2 style predictor, trimmed).

Gaussian-weighted patch aggregation, test-time mirroring, optional on-device accumulation.
"""
import itertools
from contextlib import nullcontext as dummy_context
from typing import List, Tuple, Union

import numpy as np
import torch
from scipy.ndimage import gaussian_filter
from tqdm import tqdm


def empty_cache(device: torch.device):
    if device.type == "cuda":
        torch.cuda.empty_cache()
    elif device.type == "mps":
        from torch import mps
        mps.empty_cache()


def compute_gaussian(tile_size, sigma_scale=1.0 / 8, value_scaling_factor=1, dtype=torch.float16, device=torch.device("cuda", 0)):
    tmp = np.zeros(tile_size)
    center_coords = [i // 2 for i in tile_size]
    sigmas = [i * sigma_scale for i in tile_size]
    tmp[tuple(center_coords)] = 1
    gaussian_importance_map = gaussian_filter(tmp, sigmas, 0, mode="constant", cval=0)
    gaussian_importance_map = torch.from_numpy(gaussian_importance_map)
    gaussian_importance_map /= torch.max(gaussian_importance_map) / value_scaling_factor
    gaussian_importance_map = gaussian_importance_map.to(device=device, dtype=dtype)
    mask = gaussian_importance_map == 0
    gaussian_importance_map[mask] = torch.min(gaussian_importance_map[~mask])
    return gaussian_importance_map


def compute_steps_for_sliding_window(image_size, tile_size, tile_step_size: float) -> List[List[int]]:
    assert all(i >= j for i, j in zip(image_size, tile_size)), "image size must be as large or larger than patch_size"
    target_step_sizes_in_voxels = [i * tile_step_size for i in tile_size]
    num_steps = [int(np.ceil((i - k) / j)) + 1 for i, j, k in zip(image_size, target_step_sizes_in_voxels, tile_size)]
    steps = []
    for dim in range(len(tile_size)):
        max_step_value = image_size[dim] - tile_size[dim]
        actual_step_size = max_step_value / (num_steps[dim] - 1) if num_steps[dim] > 1 else 99999999999
        steps.append([int(np.round(actual_step_size * i)) for i in range(num_steps[dim])])
    return steps


class SlidingWindowPredictor:
    def __init__(self, tile_step_size: float = 0.5, use_gaussian: bool = True, use_mirroring: bool = True,
                 perform_everything_on_device: bool = True, device: torch.device = torch.device("cuda"),
                 verbose: bool = False, allow_tqdm: bool = True):
        self.tile_step_size = tile_step_size
        self.use_gaussian = use_gaussian
        self.use_mirroring = use_mirroring
        if device.type == "cuda":  # cudnn autotuning for fixed patch sizes
            torch.backends.cudnn.benchmark = True
        else:
            print("perform_everything_on_device=True is only supported for cuda devices! Setting this to False")
            perform_everything_on_device = False
        self.device = device
        self.perform_everything_on_device = perform_everything_on_device
        self.verbose = verbose
        self.allow_tqdm = allow_tqdm
        self.network = None
        self.patch_size = None
        self.num_classes = None
        self.allowed_mirroring_axes = (0, 1, 2)

    def initialize(self, network, patch_size, num_classes, allowed_mirroring_axes=(0, 1, 2)):
        self.network = network.to(self.device).eval()
        self.patch_size = tuple(patch_size)
        self.num_classes = num_classes
        self.allowed_mirroring_axes = allowed_mirroring_axes
        if torch.cuda.is_available() and not isinstance(network, torch._dynamo.eval_frame.OptimizedModule):
            print("Using torch.compile")
            self.network = torch.compile(self.network)

    def _internal_get_sliding_window_slicers(self, image_size: Tuple[int, ...]):
        slicers = []
        steps = compute_steps_for_sliding_window(image_size, self.patch_size, self.tile_step_size)
        for sx, sy, sz in itertools.product(*steps):
            slicers.append(tuple([slice(None), *[slice(si, si + ti) for si, ti in zip((sx, sy, sz), self.patch_size)]]))
        return slicers

    @torch.inference_mode()
    def _internal_maybe_mirror_and_predict(self, x: torch.Tensor) -> torch.Tensor:
        mirror_axes = self.allowed_mirroring_axes if self.use_mirroring else None
        prediction = self.network(x)
        if mirror_axes is not None:
            axes = [m + 2 for m in mirror_axes]
            combos = [c for i in range(len(axes)) for c in itertools.combinations(axes, i + 1)]
            for axes_combo in combos:
                prediction += torch.flip(self.network(torch.flip(x, axes_combo)), axes_combo)
            prediction /= len(combos) + 1
        return prediction

    @torch.inference_mode()
    def _internal_predict_sliding_window_return_logits(self, data: torch.Tensor, slicers, do_on_device: bool = True):
        results_device = self.device if do_on_device else torch.device("cpu")
        empty_cache(self.device)
        data = data.to(results_device)
        predicted_logits = torch.zeros((self.num_classes, *data.shape[1:]), dtype=torch.half, device=results_device)
        n_predictions = torch.zeros(data.shape[1:], dtype=torch.half, device=results_device)
        gaussian = compute_gaussian(tuple(self.patch_size), sigma_scale=1.0 / 8, value_scaling_factor=10,
                                    device=results_device) if self.use_gaussian else 1
        for sl in tqdm(slicers, disable=not self.allow_tqdm):
            workon = data[sl][None].to(self.device, non_blocking=False)
            prediction = self._internal_maybe_mirror_and_predict(workon)[0].to(results_device)
            if self.use_gaussian:
                prediction *= gaussian
            predicted_logits[sl] += prediction
            n_predictions[sl[1:]] += gaussian
        predicted_logits /= n_predictions
        if torch.any(torch.isinf(predicted_logits)):
            raise RuntimeError("Encountered inf in predicted array. Aborting...")
        return predicted_logits

    @torch.inference_mode()
    def predict_sliding_window_return_logits(self, input_image: torch.Tensor) -> Union[np.ndarray, torch.Tensor]:
        assert isinstance(input_image, torch.Tensor)
        self.network = self.network.to(self.device)
        self.network.eval()
        empty_cache(self.device)
        with torch.autocast(self.device.type, enabled=True) if self.device.type == "cuda" else dummy_context():
            assert input_image.ndim == 4, "input_image must be a 4D np.ndarray or torch.Tensor (c, x, y, z)"
            slicers = self._internal_get_sliding_window_slicers(input_image.shape[1:])
            if self.perform_everything_on_device and self.device != "cpu":
                try:
                    predicted_logits = self._internal_predict_sliding_window_return_logits(
                        input_image, slicers, self.perform_everything_on_device)
                except RuntimeError:
                    print("Prediction on device was unsuccessful, probably due to a lack of memory. "
                          "Moving results arrays to CPU")
                    empty_cache(self.device)
                    predicted_logits = self._internal_predict_sliding_window_return_logits(input_image, slicers, False)
            else:
                predicted_logits = self._internal_predict_sliding_window_return_logits(
                    input_image, slicers, self.perform_everything_on_device)
            empty_cache(self.device)
        return predicted_logits


def predict_case(network, image: np.ndarray, patch_size, num_classes, device_id: int = 0):
    predictor = SlidingWindowPredictor(device=torch.device("cuda", device_id))
    predictor.initialize(network, patch_size, num_classes)
    logits = predictor.predict_sliding_window_return_logits(torch.from_numpy(image).float())
    return logits.float().softmax(0).argmax(0).cpu().numpy()
