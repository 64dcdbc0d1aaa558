"""DELG (PyTorch re-implementation): extract global + local descriptors for a list of images.

Writes one .npz per split with the global descriptors (N x 2048) and, per image, the
top-scoring local descriptors (<= 1000 x 128) with their keypoint locations and scales.

    python delg/extract_features.py --cfg configs/delg_r50_gldv2.yaml \
        --images lists/roxford5k_db.txt --out feats/roxford5k_db.npz --gpu 0
"""
import argparse
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torchvision import transforms
from tqdm import tqdm

from delg.config import cfg, load_cfg
from delg.model import DelgModel

# Ampere GPUs: TF32 matmuls are fine for retrieval descriptors
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.backends.cudnn.benchmark = True

GLOBAL_SCALES = [0.70710677, 1.0, 1.4142135]
LOCAL_SCALES = [0.25, 0.35355338, 0.5, 0.70710677, 1.0, 1.4142135, 2.0]
MAX_LOCAL_FEATURES = 1000
LOCAL_SCORE_THRESHOLD = 175.0


def parse_args():
    parser = argparse.ArgumentParser(description="DELG feature extraction")
    parser.add_argument("--cfg", required=True, type=str)
    parser.add_argument("--images", required=True, type=str, help="text file, one image path per line")
    parser.add_argument("--out", required=True, type=str)
    parser.add_argument("--weights", default="", type=str)
    parser.add_argument("--gpu", default=0, type=int, help="CUDA device index")
    parser.add_argument("--no-local", action="store_true", help="global descriptors only")
    parser.add_argument("--amp", action="store_true", help="run the backbone under fp16 autocast")
    parser.add_argument("--pool", default="gem", choices=["gem", "mac"])
    return parser.parse_args()


class ImageList(torch.utils.data.Dataset):
    def __init__(self, paths, max_size=1024):
        self.paths = paths
        self.max_size = max_size
        self.to_tensor = transforms.Compose([
            transforms.ToTensor(),
            transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        ])

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        img = Image.open(self.paths[i]).convert("RGB")
        w, h = img.size
        s = self.max_size / max(w, h)
        if s < 1:
            img = img.resize((round(w * s), round(h * s)), Image.BILINEAR)
        return self.to_tensor(img)


def gem(x, p=3.0, eps=1e-6):
    return F.avg_pool2d(x.clamp(min=eps).pow(p), (x.size(-2), x.size(-1))).pow(1.0 / p)


def global_pool(fmap, pool):
    if pool == "mac":
        return F.adaptive_max_pool2d(fmap, (1, 1))
    return gem(fmap)


def resize(img, scale):
    if scale == 1.0:
        return img
    return F.interpolate(img, scale_factor=scale, mode="bilinear", align_corners=False)


def calc_receptive_boxes(height, width, device):
    """Receptive field centres of the layer-3 feature map of a ResNet-50 (stride 16, rf 291)."""
    rf, stride, padding = 291.0, 16.0, 145.0
    y, x = torch.meshgrid(torch.arange(height, device=device), torch.arange(width, device=device), indexing="ij")
    coords = torch.stack([y, x], dim=-1).reshape(-1, 2).float()
    point_boxes = torch.cat([coords, coords], dim=1)
    bias = torch.tensor([-padding, -padding, -padding + rf - 1, -padding + rf - 1], device=device)
    return stride * point_boxes + bias


@torch.no_grad()
def extract_global(model, img, pool, use_amp):
    desc = 0
    for s in GLOBAL_SCALES:
        with torch.cuda.amp.autocast(enabled=use_amp):
            fmap = model.backbone_l4(resize(img, s))
        d = global_pool(fmap.float(), pool).flatten(1)
        d = model.whiten(d)
        desc = desc + F.normalize(d, dim=1)
    return F.normalize(desc, dim=1).squeeze(0)


@torch.no_grad()
def extract_local(model, img, use_amp):
    all_boxes, all_desc, all_scores, all_scales = [], [], [], []
    for s in LOCAL_SCALES:
        with torch.cuda.amp.autocast(enabled=use_amp, dtype=torch.float16):
            fmap3 = model.backbone_l3(resize(img, s))
        fmap3 = fmap3.float()
        att_score = model.attention(fmap3)  # 1 x 1 x h x w
        h, w = fmap3.shape[-2:]
        boxes = calc_receptive_boxes(h, w, fmap3.device) / s
        desc = model.autoencoder.encode(fmap3)  # 1 x 128 x h x w
        desc = desc.flatten(2).squeeze(0).t()
        scores = att_score.flatten()
        keep = scores >= LOCAL_SCORE_THRESHOLD
        all_boxes.append(boxes[keep])
        all_desc.append(desc[keep])
        all_scores.append(scores[keep])
        all_scales.append(torch.full((int(keep.sum()),), s, device=fmap3.device))
    boxes = torch.cat(all_boxes)
    desc = F.normalize(torch.cat(all_desc), dim=1)
    scores = torch.cat(all_scores)
    scales = torch.cat(all_scales)
    k = min(MAX_LOCAL_FEATURES, scores.numel())
    top = torch.topk(scores, k).indices
    centres = (boxes[top, :2] + boxes[top, 2:]) / 2.0
    return {
        "locations": centres.cpu().numpy(),
        "descriptors": desc[top].cpu().numpy(),
        "scales": scales[top].cpu().numpy(),
        "attention": scores[top].cpu().numpy(),
    }


def main():
    args = parse_args()
    load_cfg(args.cfg)

    torch.cuda.set_device(args.gpu)
    device = torch.device("cuda", args.gpu)

    model = DelgModel(cfg)
    weights = args.weights or cfg.TEST.WEIGHTS
    state = torch.load(weights, map_location="cpu")
    model.load_state_dict(state.get("model_state", state))
    model = model.to(device).eval()

    with open(args.images) as f:
        paths = [line.strip() for line in f if line.strip()]

    # big images at 2x scale do not fit on 16GB cards; shrink the input a bit there
    total_mem_gb = torch.cuda.get_device_properties(args.gpu).total_memory / 2 ** 30
    max_size = 1024 if total_mem_gb > 20 else 800
    loader = torch.utils.data.DataLoader(ImageList(paths, max_size=max_size), batch_size=1,
                                         num_workers=8, pin_memory=True)

    dim = cfg.MODEL.HEADS.REDUCTION_DIM
    # pinned host buffer so the device->host copies can overlap with the next image
    global_desc = torch.empty((len(paths), dim), dtype=torch.float32).pin_memory()
    local_feats = []

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    start_evt.record()
    t0 = time.time()
    for i, img in enumerate(tqdm(loader, mininterval=10)):
        img = img.to(device, non_blocking=True)
        global_desc[i].copy_(extract_global(model, img, args.pool, args.amp), non_blocking=True)
        if not args.no_local:
            local_feats.append(extract_local(model, img, args.amp))
    end_evt.record()
    torch.cuda.synchronize(device)
    print("extracted {} images in {:.1f}s (device time {:.1f}s)".format(
        len(paths), time.time() - t0, start_evt.elapsed_time(end_evt) / 1000.0))

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    out = {"global": global_desc.numpy(), "paths": np.array(paths)}
    if not args.no_local:
        out["local"] = np.array(local_feats, dtype=object)
    np.savez(args.out, **out)


if __name__ == "__main__":
    main()
