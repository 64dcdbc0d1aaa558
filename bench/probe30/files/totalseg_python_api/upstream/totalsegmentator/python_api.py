import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Union

import nibabel as nib
import numpy as np
import torch
from nibabel.nifti1 import Nifti1Image

from totalsegmentator.config import setup_nnunet, setup_totalseg, increase_prediction_counter
from totalsegmentator.config import send_usage_stats, set_license_number, has_valid_license_offline
from totalsegmentator.libs import download_pretrained_weights
from totalsegmentator.map_to_binary import class_map
from totalsegmentator.nnunet import nnUNet_predict_image


def validate_device_type_api(value):
    valid_strings = ["gpu", "cpu", "mps"]
    if value in valid_strings:
        return value

    # Check if the value matches the pattern "gpu:X" where X is an integer
    pattern = r"^gpu:(\d+)$"
    match = re.match(pattern, value)
    if match:
        device_id = int(match.group(1))
        return value

    raise ValueError(
        f"Invalid device type: '{value}'. Must be 'gpu', 'cpu', 'mps', or 'gpu:X' where X is an integer representing the GPU device ID.")


def convert_device_to_cuda(device):
    if device in ["cpu", "mps", "gpu"]:
        return device
    else:  # gpu:X
        return f"cuda:{device.split(':')[1]}"


def select_device(device: Union[str, torch.device]) -> torch.device:
    """Map the user facing names ('gpu', 'gpu:1', 'cpu', 'mps') to a torch.device."""
    if isinstance(device, torch.device):
        return device
    device = validate_device_type_api(device)
    device = convert_device_to_cuda(device)

    if device == "gpu":
        device = "cuda"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            print(
                "No GPU detected. Running on CPU. This can be very slow. The '--fast' or the `--roi_subset` option can help to reduce runtime.")
            return torch.device("cpu")
        device_id = int(device[5:]) if device.startswith("cuda:") else 0
        return torch.device("cuda", device_id)
    if device == "mps":
        return torch.device("mps")
    return torch.device("cpu")


def gpu_memory_gb(device: torch.device) -> float:
    """Total memory of the selected GPU in GB (0 if we are not running on a GPU)."""
    if device.type != "cuda":
        return 0.0
    return torch.cuda.get_device_properties(device.index or 0).total_memory / 1024 ** 3


def totalsegmentator(input: Union[str, Path, Nifti1Image], output: Union[str, Path, None] = None, ml=False,
                     nr_thr_resamp=1, nr_thr_saving=6, fast=False, nora_tag="None", preview=False, task="total",
                     roi_subset=None, statistics=False, radiomics=False, crop_path=None, body_seg=False,
                     force_split=False, output_type="nifti", quiet=False, verbose=False, test=0,
                     skip_saving=False, device="gpu", license_number=None,
                     statistics_exclude_masks_at_border=True, no_derived_masks=False,
                     v1_order=False, fastest=False, roi_subset_robust=None, stats_aggregation="mean",
                     remove_small_blobs=False, higher_order_resampling=False, save_probabilities=None):
    """
    Run TotalSegmentator from within python.

    For explanation of the arguments see description of command line
    arguments in bin/TotalSegmentator.

    Return: multilabel_image or None
    """
    if not isinstance(input, Nifti1Image):
        input = Path(input)

    if output is not None:
        output = Path(output)
    else:
        if radiomics:
            raise ValueError("Output path is required for radiomics.")

    nora_tag = "None" if nora_tag is None else nora_tag

    device = select_device(device)

    # small GPUs run out of memory with the 1.5mm models on large CTs: fall back to the 3mm models
    if device.type == "cuda" and not fast and not fastest and gpu_memory_gb(device) < 7.5:
        if not quiet:
            print("GPU has less than 8GB of memory. Switching to --fast mode (3mm models).")
        fast = True

    if not quiet:
        print("\nIf you use this tool please cite: https://pubs.rsna.org/doi/10.1148/ryai.230024\n")

    setup_nnunet()
    setup_totalseg()
    if license_number is not None:
        set_license_number(license_number)

    if task == "total":
        if fast:
            task_id = 297
            resample = 3.0
            trainer = "nnUNetTrainer_4000epochs_NoMirroring"
            crop = None
            if not quiet: print("Using 'fast' option: resampling to lower resolution (3mm)")
        elif fastest:
            task_id = 298
            resample = 6.0
            trainer = "nnUNetTrainer_4000epochs_NoMirroring"
            crop = None
            if not quiet: print("Using 'fastest' option: resampling to lower resolution (6mm)")
        else:
            task_id = [291, 292, 293, 294, 295]
            resample = 1.5
            trainer = "nnUNetTrainerNoMirroring"
            crop = None
        model = "3d_fullres"
        folds = [0]
    elif task == "lung_vessels":
        task_id = 258
        resample = None
        trainer = "nnUNetTrainer"
        crop = ["lung_upper_lobe_left", "lung_lower_lobe_left", "lung_upper_lobe_right",
                "lung_middle_lobe_right", "lung_lower_lobe_right"]
        model = "3d_fullres"
        folds = [0]
        if fast: raise ValueError("task lung_vessels does not work with option --fast")
    else:
        raise ValueError(f"Unknown task: {task}")

    crop_path = output if crop_path is None else crop_path

    if isinstance(task_id, int):
        download_pretrained_weights(task_id)
    else:
        for tid in task_id:
            download_pretrained_weights(tid)

    # Generate rough organ segmentation (6mm) for speed up if crop or roi_subset is used
    # (for "fast" on GPU it makes no big difference, but on CPU it can help even for "fast")
    if crop is not None or roi_subset is not None:
        if device.type == "cuda":
            torch.cuda.empty_cache()
        body_seg = False  # can not be used together with body_seg

    if body_seg:
        download_pretrained_weights(300)
        st = nnUNet_predict_image(input, None, 300, model="3d_fullres", folds=[0],
                                  trainer="nnUNetTrainer", tta=False, multilabel_image=True, resample=6.0,
                                  crop=None, crop_path=None, task_name="body", nora_tag="None", preview=False,
                                  save_binary=True, nr_threads_resampling=nr_thr_resamp, nr_threads_saving=1,
                                  crop_addon=[3, 3, 3], output_type=output_type, statistics=False,
                                  quiet=quiet, verbose=verbose, test=0, skip_saving=False, device=device)
        crop = st
        crop_path = None

    seg_img, ct_img = nnUNet_predict_image(input, output, task_id, model=model, folds=folds,
                                           trainer=trainer, tta=False, multilabel_image=ml, resample=resample,
                                           crop=crop, crop_path=crop_path, task_name=task, nora_tag=nora_tag,
                                           preview=preview, nr_threads_resampling=nr_thr_resamp,
                                           nr_threads_saving=nr_thr_saving, force_split=force_split,
                                           crop_addon=[3, 3, 3], roi_subset=roi_subset, output_type=output_type,
                                           statistics=statistics, quiet=quiet, verbose=verbose, test=test,
                                           skip_saving=skip_saving, device=device,
                                           save_probabilities=save_probabilities)[:2]
    seg = seg_img.get_fdata().astype(np.uint8)

    if verbose and device.type == "cuda":
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated(device) / 1024 ** 3:.1f} GB")

    try:
        increase_prediction_counter()
        send_usage_stats({"task": task, "fast": fast, "preview": preview,
                          "multilabel": ml, "roi_subset": roi_subset,
                          "statistics": statistics, "radiomics": radiomics})
    except Exception as e:
        # print(f"Error while sending usage stats: {e}")
        pass

    return seg_img
