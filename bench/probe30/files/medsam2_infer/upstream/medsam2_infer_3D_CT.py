# -*- coding: utf-8 -*-
"""
MedSAM2 inference on 3D CT volumes (npz with imgs / boxes / spacing).

The key slice of every lesion is prompted with its bounding box, the mask is then
propagated forward and backward through the volume with the SAM2 video predictor.

usage:
    python medsam2_infer_3D_CT.py -i ./data/validation_npz -o ./results \
        --checkpoint ./checkpoints/MedSAM2_latest.pt --cfg configs/sam2.1_hiera_t512.yaml
"""
import argparse
import os
from glob import glob
from os.path import basename, join

import numpy as np
import SimpleITK as sitk
import torch
import torch.nn.functional as F
from PIL import Image
from skimage import measure
from tqdm import tqdm

from sam2.build_sam import build_sam2_video_predictor_npz

torch.set_float32_matmul_precision("high")
torch.manual_seed(2024)
torch.cuda.manual_seed(2024)
np.random.seed(2024)

parser = argparse.ArgumentParser()
parser.add_argument("--checkpoint", type=str, default="checkpoints/MedSAM2_latest.pt", help="checkpoint path")
parser.add_argument("--cfg", type=str, default="configs/sam2.1_hiera_t512.yaml", help="model config")
parser.add_argument("-i", "--imgs_path", type=str, default="CT_DeepLesion/images", help="imgs path")
parser.add_argument("-o", "--pred_save_dir", type=str, default="./DeeLesion_results", help="path to save segmentation results")
parser.add_argument("--propagate_with_box", default=True, action="store_true", help="whether to propagate with box")
parser.add_argument("--device", type=str, default="cuda:0", help="GPU used for the predictor")
args = parser.parse_args()

checkpoint = args.checkpoint
model_cfg = args.cfg
imgs_path = args.imgs_path
pred_save_dir = args.pred_save_dir
os.makedirs(pred_save_dir, exist_ok=True)
propagate_with_box = args.propagate_with_box

# run the whole script in bfloat16, TF32 for the remaining fp32 matmuls on Ampere
torch.autocast(device_type="cuda", dtype=torch.bfloat16).__enter__()
if torch.cuda.get_device_properties(0).major >= 8:
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True


def getLargestCC(segmentation):
    labels = measure.label(segmentation)
    largestCC = labels == np.argmax(np.bincount(labels.flat)[1:]) + 1
    return largestCC


def dice_multi_class(preds, targets):
    smooth = 1.0
    assert preds.shape == targets.shape
    labels = np.unique(targets)[1:]
    dices = []
    for label in labels:
        pred = preds == label
        target = targets == label
        intersection = (pred * target).sum()
        dices.append((2.0 * intersection + smooth) / (pred.sum() + target.sum() + smooth))
    return np.mean(dices)


def resize_grayscale_to_rgb_and_resize(array, image_size):
    """
    Resize a 3D grayscale NumPy array to an RGB image and then resize it.

    Parameters:
        array (np.ndarray): Input array of shape (d, h, w).
        image_size (int): Desired size for the width and height.

    Returns:
        np.ndarray: Resized array of shape (d, 3, image_size, image_size).
    """
    d, h, w = array.shape
    resized_array = np.zeros((d, 3, image_size, image_size))

    for i in range(d):
        img_pil = Image.fromarray(array[i].astype(np.uint8))
        img_rgb = img_pil.convert("RGB")
        img_resized = img_rgb.resize((image_size, image_size))
        img_array = np.array(img_resized).transpose(2, 0, 1)  # (3, image_size, image_size)
        resized_array[i] = img_array

    return resized_array


def mask2D_to_bbox(gt2D, max_shift=20):
    y_indices, x_indices = np.where(gt2D > 0)
    x_min, x_max = np.min(x_indices), np.max(x_indices)
    y_min, y_max = np.min(y_indices), np.max(y_indices)
    H, W = gt2D.shape
    bbox_shift = np.random.randint(0, max_shift + 1, 1)[0]
    x_min = max(0, x_min - bbox_shift)
    x_max = min(W - 1, x_max + bbox_shift)
    y_min = max(0, y_min - bbox_shift)
    y_max = min(H - 1, y_max + bbox_shift)
    boxes = np.array([x_min, y_min, x_max, y_max])
    return boxes


def preprocess(image_data, modality="CT", window_level=40, window_width=400):
    if modality == "CT":
        lower_bound = window_level - window_width / 2
        upper_bound = window_level + window_width / 2
    else:
        lower_bound, upper_bound = np.percentile(image_data[image_data > 0], 0.5), np.percentile(image_data[image_data > 0], 99.5)
    image_data_pre = np.clip(image_data, lower_bound, upper_bound)
    image_data_pre = (image_data_pre - np.min(image_data_pre)) / (np.max(image_data_pre) - np.min(image_data_pre)) * 255.0
    return image_data_pre


predictor = build_sam2_video_predictor_npz(model_cfg, checkpoint, device=args.device)
nii_fnames = sorted(glob(join(imgs_path, "*.nii.gz")))
print(f"processing {len(nii_fnames)} volumes")

img_mean = (0.485, 0.456, 0.406)
img_std = (0.229, 0.224, 0.225)

for nii_fname in tqdm(nii_fnames):
    nii_image = sitk.ReadImage(nii_fname)
    nii_image_data = sitk.GetArrayFromImage(nii_image)
    nii_image_data_pre = preprocess(nii_image_data, modality="CT")
    nii_image_data_pre = np.uint8(nii_image_data_pre)

    key_slice_idx = nii_image_data_pre.shape[0] // 2
    gt_path = nii_fname.replace("images", "labels")
    gt_data = sitk.GetArrayFromImage(sitk.ReadImage(gt_path)) if os.path.exists(gt_path) else None

    segs_3D = np.zeros(nii_image_data.shape, dtype=np.uint8)
    video_height = nii_image_data_pre.shape[1]
    video_width = nii_image_data_pre.shape[2]
    img_resized = resize_grayscale_to_rgb_and_resize(nii_image_data_pre, 512)
    img_resized = img_resized / 255.0
    img_resized = torch.from_numpy(img_resized).cuda()
    img_mean_t = torch.tensor(img_mean, dtype=torch.float32)[:, None, None].cuda()
    img_std_t = torch.tensor(img_std, dtype=torch.float32)[:, None, None].to(img_resized.device)
    img_resized -= img_mean_t
    img_resized /= img_std_t

    if gt_data is None or not np.any(gt_data[key_slice_idx]):
        continue
    box = mask2D_to_bbox(gt_data[key_slice_idx] > 0, max_shift=5)

    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.bfloat16):
        inference_state = predictor.init_state(img_resized, video_height, video_width)
        if propagate_with_box:
            _, out_obj_ids, out_mask_logits = predictor.add_new_points_or_box(
                inference_state=inference_state, frame_idx=key_slice_idx, obj_id=1, box=box
            )
        for out_frame_idx, out_obj_ids, out_mask_logits in predictor.propagate_in_video(inference_state):
            segs_3D[out_frame_idx, (out_mask_logits[0] > 0.0).cpu().numpy()[0]] = 1
        predictor.reset_state(inference_state)
        if propagate_with_box:
            _, out_obj_ids, out_mask_logits = predictor.add_new_points_or_box(
                inference_state=inference_state, frame_idx=key_slice_idx, obj_id=1, box=box
            )
        for out_frame_idx, out_obj_ids, out_mask_logits in predictor.propagate_in_video(
            inference_state, reverse=True
        ):
            segs_3D[out_frame_idx, (out_mask_logits[0] > 0.0).cpu().numpy()[0]] = 1
        predictor.reset_state(inference_state)

    if np.max(segs_3D) > 0:
        segs_3D = getLargestCC(segs_3D)
        segs_3D = np.uint8(segs_3D)
    sitk_image = sitk.GetImageFromArray(nii_image_data_pre)
    sitk_image.CopyInformation(nii_image)
    sitk_mask = sitk.GetImageFromArray(segs_3D)
    sitk_mask.CopyInformation(nii_image)
    sitk.WriteImage(sitk_mask, os.path.join(pred_save_dir, basename(nii_fname).replace(".nii.gz", "_pred.nii.gz")))
    if gt_data is not None:
        print(basename(nii_fname), "DSC:", round(float(dice_multi_class(segs_3D, (gt_data > 0).astype(np.uint8))), 4))
    torch.cuda.empty_cache()
