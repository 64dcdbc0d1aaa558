#!/usr/bin/env python3
"""Extract DELG global descriptors and local features (keypoints + 128-d descriptors) for a
revisited Oxford/Paris style dataset, and dump them to .npy/.pkl for the reranking stage.

    python test/extract_delg.py --cfg configs/resnet50_delg_8gpu.yaml \
        --dataset roxford5k --data-root /data/revisitop --weights weights/r50_delg.pyth \
        --gpus 0,1,2,3 --out features/roxford5k
"""

import os
import sys
import time
import pickle
import argparse

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import core.checkpoint as checkpoint
from core.config import cfg
from model.delg_model import Delg
from test.dataset import configdataset

MEAN = [0.406, 0.456, 0.485]
STD = [0.225, 0.224, 0.229]

# local feature extraction parameters (same as the TF DELG release)
RF, STRIDE, PADDING = 291.0, 16.0, 145.0
ATTN_THRESHOLD = 0.1
MAX_KEYPOINTS = 1000


def parse_args():
    parser = argparse.ArgumentParser(description="DELG feature extraction")
    parser.add_argument("--cfg", dest="cfg_file", required=True, type=str)
    parser.add_argument("--dataset", default="roxford5k", type=str)
    parser.add_argument("--data-root", default="/data/revisitop", type=str)
    parser.add_argument("--weights", required=True, type=str)
    parser.add_argument("--gpus", default="0", type=str, help="comma separated GPU ids, e.g. 0,1,2,3")
    parser.add_argument("--scales", default="0.7071,1.0,1.4142", type=str)
    parser.add_argument("--out", default="features", type=str)
    parser.add_argument("--no-local", dest="local", action="store_false")
    return parser.parse_args()


def prepare_image(path, scale, bbx=None):
    im = cv2.imread(path)
    if bbx is not None:
        x1, y1, x2, y2 = [int(v) for v in bbx]
        im = im[y1:y2, x1:x2]
    im = im.astype(np.float32, copy=False)
    if scale != 1.0:
        im = cv2.resize(im, None, fx=scale, fy=scale, interpolation=cv2.INTER_LINEAR)
    im = im.transpose([2, 0, 1]) / 255.0
    for i in range(3):
        im[i] = (im[i] - MEAN[i]) / STD[i]
    return im


def calculate_receptive_boxes(height, width, device):
    """Receptive field boxes (x1, y1, x2, y2) of every position of the block3 feature map."""
    y, x = torch.meshgrid(torch.arange(height, device=device), torch.arange(width, device=device))
    coords = torch.stack([y.reshape(-1), x.reshape(-1)], dim=1).float()
    point_boxes = torch.cat([coords, coords], dim=1)
    bias = torch.tensor([-PADDING, -PADDING, -PADDING + RF - 1, -PADDING + RF - 1], device=device)
    return STRIDE * point_boxes + bias


@torch.no_grad()
def extract_global(model, im_path, scales, bbx=None):
    desc = None
    for s in scales:
        im = prepare_image(im_path, s, bbx)
        im = torch.from_numpy(im).unsqueeze(0).cuda()
        feat, _ = model.delg.globalmodel(im)
        feat = F.normalize(feat, p=2, dim=1)
        desc = feat if desc is None else desc + feat
    desc = F.normalize(desc, p=2, dim=1)
    return desc.squeeze(0).cpu().numpy()


@torch.no_grad()
def extract_local(model, im_path, scales, bbx=None):
    locations, descriptors, attentions, all_scales = [], [], [], []
    for s in scales:
        im = prepare_image(im_path, s, bbx)
        inp = torch.from_numpy(im).unsqueeze(0).cuda(non_blocking=True)
        _, feamap = model.delg.globalmodel(inp)
        reduced, _ = model.delg.autoencoder(feamap)
        _, att = model.delg.localmodel(feamap)
        h, w = reduced.shape[2], reduced.shape[3]
        boxes = calculate_receptive_boxes(h, w, reduced.device)
        feats = reduced.squeeze(0).view(reduced.shape[1], -1).t()
        att = att.view(-1)
        keep = torch.nonzero(att >= ATTN_THRESHOLD).squeeze(1)
        if keep.numel() == 0:
            continue
        centers = (boxes[keep, :2] + boxes[keep, 2:]) / 2.0 / s
        locations.append(centers)
        descriptors.append(F.normalize(feats[keep], p=2, dim=1))
        attentions.append(att[keep])
        all_scales.append(torch.full((keep.numel(),), s, device=att.device))
    if not locations:
        return np.zeros((0, 2), np.float32), np.zeros((0, 128), np.float32)
    locations = torch.cat(locations)
    descriptors = torch.cat(descriptors)
    attentions = torch.cat(attentions)
    order = torch.argsort(attentions, descending=True)[:MAX_KEYPOINTS]
    return locations[order].cpu().numpy(), descriptors[order].cpu().numpy()


def main():
    args = parse_args()
    cfg.merge_from_file(args.cfg_file)
    cfg.NUM_GPUS = len(args.gpus.split(","))
    gpu_ids = [int(g) for g in args.gpus.split(",")]
    scales = [float(s) for s in args.scales.split(",")]
    os.makedirs(args.out, exist_ok=True)

    torch.backends.cudnn.benchmark = False  # variable image sizes
    print("Extracting on {} x {}".format(len(gpu_ids), torch.cuda.get_device_name(gpu_ids[0])))

    model = Delg()
    checkpoint.load_checkpoint(args.weights, model)
    model = nn.DataParallel(model, device_ids=gpu_ids).cuda(gpu_ids[0])
    model.eval()
    delg = model.module

    ds = configdataset(args.dataset, args.data_root)
    images = [ds["im_fname"](ds, i) for i in range(ds["n"])]
    qimages = [ds["qim_fname"](ds, i) for i in range(ds["nq"])]
    bbxs = [tuple(ds["gnd"][i]["bbx"]) for i in range(ds["nq"])]

    for name, paths, boxes in [("query", qimages, bbxs), ("db", images, [None] * len(images))]:
        gdescs, locals_ = [], []
        t0 = time.time()
        for i, (p, bbx) in enumerate(zip(paths, boxes)):
            gdescs.append(extract_global(delg, p, scales, bbx))
            if args.local:
                locals_.append(extract_local(delg, p, scales, bbx))
            if (i + 1) % 100 == 0:
                torch.cuda.synchronize()
                print("\r{} {}/{} ({:.3f}s/img)".format(name, i + 1, len(paths), (time.time() - t0) / (i + 1)),
                      end="")
        print("")
        np.save(os.path.join(args.out, "{}_global.npy".format(name)), np.stack(gdescs))
        if args.local:
            with open(os.path.join(args.out, "{}_local.pkl".format(name)), "wb") as f:
                pickle.dump(locals_, f)


if __name__ == "__main__":
    main()
