#!/usr/bin/env python
# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.
"""
Deform a source mesh (an ico-sphere) to fit a target mesh by minimising the
chamfer distance between points sampled on the two surfaces, regularised by
edge-length, normal-consistency and Laplacian smoothing losses.

Usage:
    python deform_mesh.py --target data/dolphin.obj --iters 2000 --out out/
"""
import argparse
import logging
import os
import time

import numpy as np
import torch

from pytorch3d.io import load_obj, save_obj
from pytorch3d.loss import (
    chamfer_distance,
    mesh_edge_loss,
    mesh_laplacian_smoothing,
    mesh_normal_consistency,
)
from pytorch3d.ops import sample_points_from_meshes
from pytorch3d.structures import Meshes
from pytorch3d.utils import ico_sphere

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    HAS_MPL = True
except ImportError:  # pragma: no cover
    HAS_MPL = False

logger = logging.getLogger("deform_mesh")


def parse_args():
    parser = argparse.ArgumentParser(description="Fit an ico-sphere to a target mesh")
    parser.add_argument("--target", type=str, default="data/dolphin/dolphin.obj")
    parser.add_argument("--out", type=str, default="output/deform")
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--level", type=int, default=4, help="ico-sphere subdivision level")
    parser.add_argument("--num-samples", type=int, default=5000)
    parser.add_argument("--w-chamfer", type=float, default=1.0)
    parser.add_argument("--w-edge", type=float, default=1.0)
    parser.add_argument("--w-normal", type=float, default=0.01)
    parser.add_argument("--w-laplacian", type=float, default=0.1)
    parser.add_argument("--plot-every", type=int, default=250)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cpu", action="store_true", help="force CPU even if a GPU is present")
    return parser.parse_args()


def get_device(force_cpu=False):
    """Pick the first CUDA device when one is available."""
    if not force_cpu and torch.cuda.is_available():
        device = torch.device("cuda:0")
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
        logger.warning("CUDA not available - running on CPU, this will be slow")
    return device


def load_target_mesh(path, device):
    """Load an .obj, centre it at the origin and scale it to the unit sphere."""
    verts, faces, _ = load_obj(path)
    faces_idx = faces.verts_idx.to(device)
    verts = verts.to(device)

    center = verts.mean(0)
    verts = verts - center
    scale = max(verts.abs().max(0)[0])
    verts = verts / scale

    # return scale / centre so that we can map the fitted mesh back
    return Meshes(verts=[verts], faces=[faces_idx]), center, scale


def plot_pointcloud(mesh, title="", path=None, num_points=5000):
    if not HAS_MPL:
        return
    points = sample_points_from_meshes(mesh, num_points)
    x, y, z = points.clone().detach().cpu().squeeze().unbind(1)
    fig = plt.figure(figsize=(5, 5))
    ax = fig.add_subplot(111, projection="3d")
    ax.scatter3D(x, z, -y, s=1)
    ax.set_xlabel("x")
    ax.set_ylabel("z")
    ax.set_zlabel("y")
    ax.set_title(title)
    ax.view_init(190, 30)
    if path is not None:
        fig.savefig(path)
    plt.close(fig)


def fit(args):
    device = get_device(args.cpu)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    trg_mesh, center, scale = load_target_mesh(args.target, device)
    src_mesh = ico_sphere(args.level, device)

    # We learn an offset for every vertex of the source mesh.
    deform_verts = torch.full(src_mesh.verts_packed().shape, 0.0, device=device, requires_grad=True)
    optimizer = torch.optim.SGD([deform_verts], lr=args.lr, momentum=args.momentum)

    history = {"chamfer": [], "edge": [], "normal": [], "laplacian": []}
    os.makedirs(args.out, exist_ok=True)

    t0 = time.time()
    for i in range(args.iters):
        optimizer.zero_grad()
        new_src_mesh = src_mesh.offset_verts(deform_verts)

        sample_trg = sample_points_from_meshes(trg_mesh, args.num_samples)
        sample_src = sample_points_from_meshes(new_src_mesh, args.num_samples)

        loss_chamfer, _ = chamfer_distance(sample_trg, sample_src)
        loss_edge = mesh_edge_loss(new_src_mesh)
        loss_normal = mesh_normal_consistency(new_src_mesh)
        loss_laplacian = mesh_laplacian_smoothing(new_src_mesh, method="uniform")

        loss = (
            loss_chamfer * args.w_chamfer
            + loss_edge * args.w_edge
            + loss_normal * args.w_normal
            + loss_laplacian * args.w_laplacian
        )

        history["chamfer"].append(float(loss_chamfer.detach().cpu()))
        history["edge"].append(float(loss_edge.detach().cpu()))
        history["normal"].append(float(loss_normal.detach().cpu()))
        history["laplacian"].append(float(loss_laplacian.detach().cpu()))

        if i % args.plot_every == 0:
            logger.info("iter %d  total_loss = %.6f  (%.1fs)", i, loss.item(), time.time() - t0)
            plot_pointcloud(new_src_mesh, title="iter: %d" % i,
                            path=os.path.join(args.out, "iter_%05d.png" % i))

        loss.backward()
        optimizer.step()

    if device.type == "cuda":
        torch.cuda.synchronize()
    logger.info("optimisation finished in %.1fs", time.time() - t0)

    final_verts, final_faces = new_src_mesh.get_mesh_verts_faces(0)
    final_verts = final_verts * scale + center
    final_obj = os.path.join(args.out, "final_model.obj")
    save_obj(final_obj, final_verts, final_faces)
    np.savez(os.path.join(args.out, "loss_history.npz"), **{k: np.asarray(v) for k, v in history.items()})

    if HAS_MPL:
        fig = plt.figure(figsize=(13, 5))
        ax = fig.gca()
        for k, v in history.items():
            ax.plot(v, label=k + " loss")
        ax.legend(fontsize="16")
        ax.set_xlabel("Iteration", fontsize="16")
        ax.set_ylabel("Loss", fontsize="16")
        ax.set_title("Loss vs iterations", fontsize="16")
        fig.savefig(os.path.join(args.out, "losses.png"))
        plt.close(fig)
    return final_obj


def main():
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = parse_args()
    out = fit(args)
    if torch.cuda.is_available():
        logger.info("peak GPU memory: %.1f MB", torch.cuda.max_memory_allocated() / 2 ** 20)
    logger.info("saved %s", out)


if __name__ == "__main__":
    main()
