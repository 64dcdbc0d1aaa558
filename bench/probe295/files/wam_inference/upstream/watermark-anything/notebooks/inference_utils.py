# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

"""
Helpers used by the inference notebook / scripts: load a trained WAM, embed and detect (multiple) watermarks.
"""

import json
import os
from argparse import Namespace

import numpy as np
import omegaconf
from PIL import Image
import matplotlib.pyplot as plt

import torch
import torch.nn.functional as F
from torchvision import transforms

from watermark_anything.augmentation.augmenter import Augmenter
from watermark_anything.models import Wam, build_embedder, build_extractor
from watermark_anything.modules.jnd import JND

# the notebooks run on a single GPU if there is one
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

# fp16 roughly halves the memory of the ViT extractor at 256x256 and is lossless for detection
USE_HALF = device.type == "cuda"

normalize_img = transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
unnormalize_img = transforms.Normalize(mean=[-0.485 / 0.229, -0.456 / 0.224, -0.406 / 0.225],
                                       std=[1 / 0.229, 1 / 0.224, 1 / 0.225])
default_transform = transforms.Compose([transforms.ToTensor(), normalize_img])


def load_model_from_checkpoint(json_path, ckpt_path):
    """
    Load a model from a checkpoint file and a JSON file containing the parameters.
    Args:
    - json_path (str): the path to the JSON file containing the parameters
    - ckpt_path (str): the path to the checkpoint file
    """
    # Load the JSON file
    with open(json_path, 'r') as file:
        params = json.load(file)
    # Create an argparse Namespace object from the parameters
    args = Namespace(**params)
    # print(args)

    # Load configurations
    embedder_cfg = omegaconf.OmegaConf.load(args.embedder_config)
    embedder_params = embedder_cfg[args.embedder_model]
    extractor_cfg = omegaconf.OmegaConf.load(args.extractor_config)
    extractor_params = extractor_cfg[args.extractor_model]
    augmenter_cfg = omegaconf.OmegaConf.load(args.augmentation_config)
    attenuation_cfg = omegaconf.OmegaConf.load(args.attenuation_config)

    # Build models
    embedder = build_embedder(args.embedder_model, embedder_params, args.nbits)
    extractor = build_extractor(extractor_cfg.model, extractor_params, args.img_size, args.nbits)
    augmenter = Augmenter(**augmenter_cfg)
    try:
        attenuation = JND(**attenuation_cfg[args.attenuation], preprocess=unnormalize_img, postprocess=normalize_img)
    except Exception:
        attenuation = None

    # Build the complete model
    wam = Wam(embedder, extractor, augmenter, attenuation, args.scaling_w, args.scaling_i)

    # Load the model weights
    if os.path.exists(ckpt_path):
        checkpoint = torch.load(ckpt_path, map_location='cpu')
        wam.load_state_dict(checkpoint)
        print("Model loaded successfully from", ckpt_path)
        print(params)
    else:
        print("Checkpoint path does not exist:", ckpt_path)

    wam = wam.to(device).eval()
    if USE_HALF:
        wam = wam.half()
    return wam


def load_img(path):
    img = Image.open(path).convert("RGB")
    img = default_transform(img).unsqueeze(0).to(device)
    if USE_HALF:
        img = img.half()
    return img


def msg2str(msg):
    return "".join([('1' if el else '0') for el in msg])


def str2msg(str):
    return [True if el == '1' else False for el in str]


def create_random_mask(img_pt, num_masks=1, mask_percentage=0.1):
    _, _, height, width = img_pt.shape
    mask_area = int(height * width * mask_percentage)
    masks = torch.zeros((num_masks, 1, height, width), dtype=img_pt.dtype)
    if mask_percentage >= 0.999:
        # Full mask for entire image
        return torch.ones((num_masks, 1, height, width), dtype=img_pt.dtype).to(img_pt.device)

    for ii in range(num_masks):
        placed = False
        while not placed:
            max_dim = int(mask_area ** 0.5)
            mask_width = np.random.randint(1, max_dim)
            mask_height = mask_area // mask_width

            # Allow for rectangular masks with random aspect ratios
            if mask_height > height or mask_width > width:
                continue

            # Randomly select the top-left corner of the mask
            x_start = np.random.randint(0, width - mask_width + 1)
            y_start = np.random.randint(0, height - mask_height + 1)

            # Check if the region overlaps with existing masks
            overlap = False
            for jj in range(ii):
                if torch.sum(masks[jj, :, y_start:y_start + mask_height, x_start:x_start + mask_width]) > 0:
                    overlap = True
                    break
            if not overlap:
                masks[ii, :, y_start:y_start + mask_height, x_start:x_start + mask_width] = 1
                placed = True

    return masks.to(img_pt.device)


@torch.no_grad()
def embed_and_detect(wam, img_pt, wm_msg, mask=None):
    """ Embeds wm_msg (1 x k bool tensor) in img_pt, optionally only inside mask, then runs the detector. """
    outputs = wam.embed(img_pt, wm_msg)
    if mask is None:
        mask = torch.ones_like(img_pt[:, :1])
    img_w = outputs['imgs_w'] * mask + img_pt * (1 - mask)
    preds = wam.detect(img_w)["preds"]  # [1, 33, 256, 256]
    mask_preds = F.sigmoid(preds[:, 0, :, :])  # [1, 256, 256], predicts which pixels are watermarked
    bit_preds = preds[:, 1:, :, :]  # [1, 32, 256, 256], predicts bits
    return img_w, mask_preds, bit_preds


def multiwm_dbscan(preds, masks, epsilon=1, min_samples=500):
    """
    Clusters the per-pixel bit predictions of the watermarked pixels with DBSCAN, one cluster per hidden message.
    Args:
        preds: (1, k, h, w) bit logits
        masks: (1, 1, h, w) predicted watermark mask (after sigmoid)
    """
    from sklearn.cluster import DBSCAN
    preds = preds.float().cpu()
    masks = masks.float().cpu()
    bit_preds = preds.squeeze(0).permute(1, 2, 0)  # h w k
    flat_mask = (masks.squeeze() > 0.5).flatten()
    flat_bits = (bit_preds.reshape(-1, bit_preds.shape[-1]) > 0).float()
    selected = flat_bits[flat_mask].numpy()
    if len(selected) == 0:
        return {}, torch.zeros(masks.shape[-2:])

    db = DBSCAN(eps=epsilon, min_samples=min_samples).fit(selected)
    labels = db.labels_
    centroids = {}
    for label in set(labels):
        if label == -1:
            continue
        centroids[label] = torch.tensor(selected[labels == label].mean(axis=0) > 0.5)

    positions = torch.full((flat_mask.shape[0],), -1, dtype=torch.long)
    positions[flat_mask] = torch.tensor(labels, dtype=torch.long)
    return centroids, positions.reshape(masks.shape[-2:])


def plot_outputs(img, img_w, mask, mask_pred, labels=None, centroids=None):
    fig, axes = plt.subplots(1, 5, figsize=(20, 4))
    axes[0].imshow(unnormalize_img(img).float().clamp(0, 1).squeeze().permute(1, 2, 0).cpu().numpy())
    axes[0].set_title("Original Image")
    axes[1].imshow(unnormalize_img(img_w).float().clamp(0, 1).squeeze().permute(1, 2, 0).cpu().numpy())
    axes[1].set_title("Watermarked Image")
    diff = np.abs(unnormalize_img(img_w).float().cpu().numpy() - unnormalize_img(img).float().cpu().numpy())
    axes[2].imshow(10 * diff.squeeze().transpose(1, 2, 0).clip(0, 1))
    axes[2].set_title("Difference (x10)")
    axes[3].imshow(mask.float().squeeze().cpu().numpy(), cmap='gray')
    axes[3].set_title("Embedding mask")
    axes[4].imshow(mask_pred.float().squeeze().cpu().numpy(), cmap='gray')
    axes[4].set_title("Predicted mask")
    for ax in axes:
        ax.axis('off')
    if labels is not None and centroids is not None:
        fig.suptitle(", ".join(f"{k}: {msg2str(v)}" for k, v in centroids.items()))
    plt.tight_layout()
    plt.show()


def gpu_info():
    """ Printed at the top of the notebook. """
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        print(f"{props.name} | {props.total_memory / 2**30:.0f} GB | sm_{props.major}{props.minor}")
    else:
        print("running on CPU, inference will be slow")
