#!/usr/bin/env python3
# Copyright (C) 2024-present. All rights reserved.
# Licensed under CC BY-NC-SA 4.0 (non-commercial use only).
#
# --------------------------------------------------------
# Batch reconstruction: run DUSt3R on all image pairs of a folder, then
# globally align the pairwise pointmaps and export a coloured point cloud.
# --------------------------------------------------------
import argparse
import os
import tqdm

import numpy as np
import torch
import trimesh

from dust3r.model import AsymmetricCroCo3DStereo
from dust3r.image_pairs import make_pairs
from dust3r.utils.image import load_images
from dust3r.utils.device import to_cpu, collate_with_cat
from dust3r.cloud_opt import global_aligner, GlobalAlignerMode

torch.backends.cuda.matmul.allow_tf32 = True  # for gpu >= Ampere and pytorch >= 1.12


def get_args_parser():
    parser = argparse.ArgumentParser("DUSt3R batch reconstruction")
    parser.add_argument("--weights", type=str,
                        default="checkpoints/DUSt3R_ViTLarge_BaseDecoder_512_dpt.pth")
    parser.add_argument("--image_dir", type=str, required=True)
    parser.add_argument("--image_size", type=int, default=512, choices=[224, 512])
    parser.add_argument("--device", type=str, default="cuda", help="pytorch device")
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument("--scene_graph", type=str, default="complete")
    parser.add_argument("--niter", type=int, default=300)
    parser.add_argument("--schedule", type=str, default="cosine")
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--min_conf_thr", type=float, default=3.0)
    parser.add_argument("--use_amp", action="store_true", help="run the network in fp16 autocast")
    parser.add_argument("--output", type=str, default="scene.glb")
    return parser


def _interleave_imgs(img1, img2):
    res = {}
    for key, value1 in img1.items():
        value2 = img2[key]
        if isinstance(value1, torch.Tensor):
            value = torch.stack((value1, value2), dim=1).flatten(0, 1)
        else:
            value = [x for pair in zip(value1, value2) for x in pair]
        res[key] = value
    return res


def make_batch_symmetric(batch):
    view1, view2 = batch
    view1, view2 = (_interleave_imgs(view1, view2), _interleave_imgs(view2, view1))
    return view1, view2


def loss_of_one_batch(batch, model, device, symmetrize_batch=False, use_amp=False):
    view1, view2 = batch
    ignore_keys = set(["depthmap", "dataset", "label", "instance", "idx", "true_shape", "rng"])
    for view in batch:
        for name in view.keys():
            if name in ignore_keys:
                continue
            view[name] = view[name].to(device, non_blocking=True)

    if symmetrize_batch:
        view1, view2 = make_batch_symmetric(batch)

    with torch.cuda.amp.autocast(enabled=bool(use_amp)):
        pred1, pred2 = model(view1, view2)

    return dict(view1=view1, view2=view2, pred1=pred1, pred2=pred2)


@torch.no_grad()
def inference(pairs, model, device, batch_size=8, use_amp=False, verbose=True):
    if verbose:
        print(f">> Inference with model on {len(pairs)} image pairs")
    result = []

    # first, check if all images have the same size
    multiple_shapes = not (check_if_same_size(pairs))
    if multiple_shapes:  # force bs=1
        batch_size = 1

    for i in tqdm.trange(0, len(pairs), batch_size, disable=not verbose):
        res = loss_of_one_batch(collate_with_cat(pairs[i:i + batch_size]), model, device, use_amp=use_amp)
        result.append(to_cpu(res))

    result = collate_with_cat(result, lists=multiple_shapes)
    torch.cuda.empty_cache()
    return result


def check_if_same_size(pairs):
    shapes1 = [img1["img"].shape[-2:] for img1, img2 in pairs]
    shapes2 = [img2["img"].shape[-2:] for img1, img2 in pairs]
    return all(shapes1[0] == s for s in shapes1) and all(shapes2[0] == s for s in shapes2)


def export_pointcloud(scene, min_conf_thr, out_path):
    pts3d = to_cpu(scene.get_pts3d())
    imgs = scene.imgs
    scene.min_conf_thr = float(scene.conf_trf(torch.tensor(min_conf_thr)))
    masks = to_cpu(scene.get_masks())
    pts = np.concatenate([p[m].numpy() for p, m in zip(pts3d, masks)])
    col = np.concatenate([im[m.numpy()] for im, m in zip(imgs, masks)])
    pct = trimesh.PointCloud(pts.reshape(-1, 3), colors=(col.reshape(-1, 3) * 255).astype(np.uint8))
    pct.export(out_path)
    print(f"wrote {len(pts)} points to {out_path}")


def main():
    args = get_args_parser().parse_args()
    device = args.device

    model = AsymmetricCroCo3DStereo.from_pretrained(args.weights).to(device)
    model.eval()

    files = sorted(os.path.join(args.image_dir, f) for f in os.listdir(args.image_dir))
    images = load_images(files, size=args.image_size)
    pairs = make_pairs(images, scene_graph=args.scene_graph, prefilter=None, symmetrize=True)
    output = inference(pairs, model, device, batch_size=args.batch_size, use_amp=args.use_amp)

    mode = GlobalAlignerMode.PointCloudOptimizer if len(images) > 2 else GlobalAlignerMode.PairViewer
    scene = global_aligner(output, device=device, mode=mode)
    if mode == GlobalAlignerMode.PointCloudOptimizer:
        loss = scene.compute_global_alignment(init="mst", niter=args.niter, schedule=args.schedule, lr=args.lr)
        print(f"final global alignment loss: {float(loss):.5f}")

    export_pointcloud(scene, args.min_conf_thr, args.output)
    if device.startswith("cuda"):
        print(f"peak GPU memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
