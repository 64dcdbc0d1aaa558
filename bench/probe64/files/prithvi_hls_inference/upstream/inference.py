"""Reconstruct masked HLS time series with Prithvi-EO and save RGB previews + GeoTIFFs.

    python inference.py --data_files t1.tif t2.tif t3.tif --config_path config.json \
        --checkpoint Prithvi_EO_V2_300M.pt --output_dir output --rgb_outputs --mask_ratio 0.5
"""
import argparse
import functools
import json
import os
from typing import List, Union

import numpy as np
import rasterio
import torch
import yaml
from einops import rearrange

from prithvi_mae import PrithviMAE

NO_DATA = -9999
NO_DATA_FLOAT = 0.0001
OFFSET = 0
PERCENTILE = 99.9


def process_channel_group(orig_img, new_img, channels, mean, std):
    mean = torch.tensor(np.asarray(mean)[:, None, None])
    std = torch.tensor(np.asarray(std)[:, None, None])
    orig_img = orig_img[channels, ...]
    valid_mask = torch.ones_like(orig_img, dtype=torch.bool)
    valid_mask[orig_img == NO_DATA_FLOAT] = False

    # Back to original data range
    orig_img = (orig_img * std[channels]) + mean[channels]
    new_img = (new_img[channels, ...] * std[channels]) + mean[channels]

    # Rescale (enhancing contrast)
    max_value = max(3000, np.percentile(orig_img[valid_mask], PERCENTILE))
    min_value = OFFSET

    orig_img = torch.clamp((orig_img - min_value) / (max_value - min_value), 0, 1)
    new_img = torch.clamp((new_img - min_value) / (max_value - min_value), 0, 1)

    # No data as zeros
    orig_img[~valid_mask] = 0
    new_img[~valid_mask] = 0
    return orig_img, new_img


def read_geotiff(file_path: str):
    with rasterio.open(file_path) as src:
        img = src.read()
        meta = src.meta
        try:
            coords = src.lnglat()
        except Exception:
            coords = None
    return img, meta, coords


def save_geotiff(image, output_path: str, meta: dict):
    with rasterio.open(output_path, "w", **meta) as dest:
        for i in range(image.shape[0]):
            dest.write(image[i, :, :], i + 1)


def _convert_np_uint8(float_image: torch.Tensor):
    image = float_image.numpy() * 255.0
    image = image.astype(dtype=np.uint8)
    return image


def load_example(file_paths: List[str], mean: List[float], std: List[float], indices: Union[list, None] = None):
    imgs, metas, temporal_coords, location_coords = [], [], [], []
    for file in file_paths:
        img, meta, coords = read_geotiff(file)
        img = np.moveaxis(img, 0, -1)  # channels last for normalization
        if indices is not None:
            img = img[..., indices]
        img = np.where(img == NO_DATA, NO_DATA_FLOAT, (img - mean) / std)
        imgs.append(img)
        metas.append(meta)
        if coords is not None:
            location_coords.append(coords)
        try:
            julian = os.path.basename(file).split("_")[-3][-7:]
            temporal_coords.append([int(julian[:4]), int(julian[4:])])
        except Exception:
            pass
    imgs = np.stack(imgs, axis=0)  # num_frames, H, W, C
    imgs = np.moveaxis(imgs, -1, 0).astype("float32")  # C, num_frames, H, W
    imgs = np.expand_dims(imgs, axis=0)  # add batch di
    return imgs, temporal_coords, location_coords, metas


def run_model(model: torch.nn.Module, input_data: torch.Tensor, temporal_coords, location_coords,
              mask_ratio: float, device: torch.device):
    with torch.no_grad():
        x = input_data.to(device)
        _, pred, mask = model(x, temporal_coords, location_coords, mask_ratio)

    # Create mask and prediction images (un-patchify)
    mask_img = model.unpatchify(mask.unsqueeze(-1).repeat(1, 1, pred.shape[-1])).detach().cpu()
    pred_img = model.unpatchify(pred).detach().cpu()

    # Mix visible and predicted patches
    rec_img = input_data.clone()
    rec_img[mask_img == 1] = pred_img[mask_img == 1]  # binary mask: 0 is keep, 1 is remove

    # Switch zeros/ones in mask images so masked patches appear darker in plots (better visualization)
    mask_img = (~(mask_img.to(torch.bool))).to(torch.float)
    return rec_img, mask_img


def main(data_files: List[str], config_path: str, checkpoint: str, output_dir: str,
         rgb_outputs: bool, mask_ratio: float = None, input_indices: list = None):
    os.makedirs(output_dir, exist_ok=True)

    # Get parameters --------
    with open(config_path, "r") as f:
        config = yaml.safe_load(f)["pretrained_cfg"]

    bands = config["bands"]
    num_frames = len(data_files)
    mean = config["mean"]
    std = config["std"]
    coords_encoding = config["coords_encoding"]
    img_size = config["img_size"]
    mask_ratio = mask_ratio or config["mask_ratio"]

    print(f"\nTreating {len(data_files)} files as {len(data_files)} time steps from the same location\n")
    if len(data_files) != 4:
        print("The original model was trained for four time steps. \nResults with different numbers of time steps may vary")

    if torch.cuda.is_available():
        device = torch.device("cuda")
    else:
        device = torch.device("cpu")

    print(f"Using {device} device.\n")

    # Loading data ---------------------------------------------------------------------------------
    input_data, temporal_coords, location_coords, meta_data = load_example(
        file_paths=data_files, indices=input_indices, mean=mean, std=std)

    if len(temporal_coords) != num_frames and "time" in coords_encoding:
        coords_encoding.pop("time")
    if not len(location_coords) and "location" in coords_encoding:
        coords_encoding.pop("location")

    # Create model and load checkpoint -------------------------------------------------------------
    config.update(coords_encoding=coords_encoding, num_frames=num_frames, in_chans=len(bands))
    model = PrithviMAE(**config)
    total_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"\n--> Model has {total_params:,} parameters.\n")
    model.to(device)

    state_dict = torch.load(checkpoint, map_location=device, weights_only=True)
    # discard fixed pos_embedding weight
    for k in list(state_dict.keys()):
        if "pos_embed" in k:
            del state_dict[k]
    model.load_state_dict(state_dict, strict=False)
    print(f"Loaded checkpoint from {checkpoint}")
    model = model.half() if torch.cuda.is_available() else model

    # Running model --------------------------------------------------------------------------------
    model.eval()
    channels = [bands.index(b) for b in ["B04", "B03", "B02"]]  # BGR -> RGB

    original_h, original_w = input_data.shape[-2:]
    pad_h = img_size - (original_h % img_size)
    pad_w = img_size - (original_w % img_size)
    input_data = np.pad(input_data, ((0, 0), (0, 0), (0, 0), (0, pad_h), (0, pad_w)), mode="reflect")

    # Build sliding window
    batch = torch.tensor(input_data, device="cpu")
    windows = batch.unfold(3, img_size, img_size).unfold(4, img_size, img_size)
    h1, w1 = windows.shape[3:5]
    windows = rearrange(windows, "b c t h1 w1 h w -> (b h1 w1) c t h w", h=img_size, w=img_size)

    # Split into batches if number of windows > batch_size
    num_batches = windows.shape[0] // 16 if windows.shape[0] > 16 else 1
    windows = torch.tensor_split(windows, num_batches, dim=0)

    temporal_coords = torch.Tensor(temporal_coords).unsqueeze(0).to(device) if temporal_coords else None
    location_coords = torch.Tensor(location_coords[0]).unsqueeze(0).to(device) if location_coords else None

    # Run model
    rec_imgs, mask_imgs = [], []
    for x in windows:
        if torch.cuda.is_available():  # fp16 inputs for the fp16 model
            x = x.half()
        rec_img, mask_img = run_model(model, x, temporal_coords, location_coords, mask_ratio, device)
        rec_imgs.append(rec_img)
        mask_imgs.append(mask_img)

    rec_imgs = torch.concat(rec_imgs, dim=0)
    mask_imgs = torch.concat(mask_imgs, dim=0)

    # Build images from patches
    rec_imgs = rearrange(rec_imgs, "(b h1 w1) c t h w -> b c t (h1 h) (w1 w)", h=img_size, w=img_size, b=1, c=len(bands), t=num_frames, h1=h1, w1=w1)
    mask_imgs = rearrange(mask_imgs, "(b h1 w1) c t h w -> b c t (h1 h) (w1 w)", h=img_size, w=img_size, b=1, c=len(bands), t=num_frames, h1=h1, w1=w1)

    # Cut padded images back to original size
    rec_imgs_full = rec_imgs[..., :original_h, :original_w]
    mask_imgs_full = mask_imgs[..., :original_h, :original_w]
    batch_full = batch[..., :original_h, :original_w]

    # Build RGB images
    if rgb_outputs:
        for d in meta_data:
            d.update(count=3, dtype="uint8", compress="lzw", nodata=0)
        for t in range(num_frames):
            rgb_orig, rgb_pred = process_channel_group(batch_full[0, :, t, :, :], rec_imgs_full[0, :, t, :, :],
                                                       channels, mean, std)
            save_geotiff(_convert_np_uint8(rgb_pred), os.path.join(output_dir, f"predicted_rgb_t{t}.tiff"), meta_data[t])
            save_geotiff(_convert_np_uint8(rgb_orig), os.path.join(output_dir, f"original_rgb_t{t}.tiff"), meta_data[t])

    print("Done!")


if __name__ == "__main__":
    parser = argparse.ArgumentParser("MAE run inference", add_help=False)
    parser.add_argument("--data_files", type=str, nargs="+", required=True)
    parser.add_argument("--config_path", "-c", type=str, default="config.json")
    parser.add_argument("--checkpoint", type=str, default="Prithvi_EO_V2_300M.pt")
    parser.add_argument("--output_dir", type=str, default="output")
    parser.add_argument("--mask_ratio", default=0.75, type=float)
    parser.add_argument("--input_indices", default=None, type=int, nargs="+")
    parser.add_argument("--rgb_outputs", action="store_true")
    args = parser.parse_args()
    main(**vars(args))
