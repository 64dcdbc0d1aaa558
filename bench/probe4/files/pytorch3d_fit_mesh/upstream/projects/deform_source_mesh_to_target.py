# Copyright (c) Meta Platforms, Inc. and affiliates. All rights reserved.
"""
Deform a source mesh (an ico-sphere) to fit a target mesh, following the
PyTorch3D "Deform a source mesh to form a target mesh" tutorial, turned into a script.
"""
import argparse
import os
import sys
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
from tqdm import tqdm


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", required=True, help="path to the target .obj")
    parser.add_argument("--out-dir", default="./out")
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--lr", type=float, default=1.0)
    parser.add_argument("--num-samples", type=int, default=5000)
    parser.add_argument("--ico-level", type=int, default=4)
    parser.add_argument("--w-chamfer", type=float, default=1.0)
    parser.add_argument("--w-edge", type=float, default=1.0)
    parser.add_argument("--w-normal", type=float, default=0.01)
    parser.add_argument("--w-laplacian", type=float, default=0.1)
    parser.add_argument("--plot-period", type=int, default=250)
    parser.add_argument("--cpu", action="store_true", help="force CPU (slow)")
    return parser.parse_args()


def get_device(force_cpu=False):
    # Set the device
    if torch.cuda.is_available() and not force_cpu:
        device = torch.device("cuda:0")
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
        print("WARNING: CPU only, this will be slow!")
    return device


def load_target_mesh(path, device):
    # We read the target 3D model using load_obj
    verts, faces, aux = load_obj(path)

    # verts is a FloatTensor of shape (V, 3) where V is the number of vertices in the mesh
    # faces is an object which contains the following LongTensors: verts_idx, normals_idx and textures_idx
    # For this tutorial, normals and textures are ignored.
    faces_idx = faces.verts_idx.to(device)
    verts = verts.to(device)

    # We scale normalize and center the target mesh to fit in a sphere of radius 1 centered at (0,0,0).
    # (scale, center) will be used to bring the predicted mesh to its original center and scale
    # Note that normalizing the target mesh, speeds up the optimization but is not necessary!
    center = verts.mean(0)
    verts = verts - center
    scale = max(verts.abs().max(0)[0])
    verts = verts / scale

    # We construct a Meshes structure for the target mesh
    trg_mesh = Meshes(verts=[verts], faces=[faces_idx])
    return trg_mesh, center, scale


def fit(args, device):
    trg_mesh, center, scale = load_target_mesh(args.target, device)

    # We initialize the source shape to be a sphere of radius 1
    src_mesh = ico_sphere(args.ico_level, device)

    # We will learn to deform the source mesh by offsetting its vertices
    # The shape of the deform parameters is equal to the total number of vertices in src_mesh
    deform_verts = torch.full(src_mesh.verts_packed().shape, 0.0, device=device, requires_grad=True)

    # The optimizer
    optimizer = torch.optim.SGD([deform_verts], lr=args.lr, momentum=0.9)

    chamfer_losses = []
    laplacian_losses = []
    edge_losses = []
    normal_losses = []

    loop = tqdm(range(args.iters))
    t0 = time.time()
    for i in loop:
        # Initialize optimizer
        optimizer.zero_grad()

        # Deform the mesh
        new_src_mesh = src_mesh.offset_verts(deform_verts)

        # We sample 5k points from the surface of each mesh
        sample_trg = sample_points_from_meshes(trg_mesh, args.num_samples)
        sample_src = sample_points_from_meshes(new_src_mesh, args.num_samples)

        # We compare the two sets of pointclouds by computing (a) the chamfer loss
        loss_chamfer, _ = chamfer_distance(sample_trg, sample_src)

        # and (b) the edge length of the predicted mesh
        loss_edge = mesh_edge_loss(new_src_mesh)

        # mesh normal consistency
        loss_normal = mesh_normal_consistency(new_src_mesh)

        # mesh laplacian smoothing
        loss_laplacian = mesh_laplacian_smoothing(new_src_mesh, method="uniform")

        # Weighted sum of the losses
        loss = (
            loss_chamfer * args.w_chamfer
            + loss_edge * args.w_edge
            + loss_normal * args.w_normal
            + loss_laplacian * args.w_laplacian
        )

        # Print the losses
        loop.set_description("total_loss = %.6f" % loss)

        # Save the losses for plotting
        chamfer_losses.append(float(loss_chamfer.detach().cpu()))
        edge_losses.append(float(loss_edge.detach().cpu()))
        normal_losses.append(float(loss_normal.detach().cpu()))
        laplacian_losses.append(float(loss_laplacian.detach().cpu()))

        if i % args.plot_period == 0 and device.type == "cuda":
            torch.cuda.synchronize()
            peak = torch.cuda.max_memory_allocated(device) / 2**20
            print(f"iter {i}: {time.time() - t0:.1f}s, peak mem {peak:.0f} MiB")

        # Optimization step
        loss.backward()
        optimizer.step()

    losses = dict(chamfer=chamfer_losses, edge=edge_losses, normal=normal_losses, laplacian=laplacian_losses)
    return new_src_mesh, center, scale, losses


def save_result(mesh, center, scale, out_dir):
    # Fetch the verts and faces of the final predicted mesh
    final_verts, final_faces = mesh.get_mesh_verts_faces(0)

    # Scale normalize back to the original target size
    final_verts = final_verts * scale + center

    # Store the predicted mesh using save_obj
    os.makedirs(out_dir, exist_ok=True)
    final_obj = os.path.join(out_dir, "final_model.obj")
    save_obj(final_obj, final_verts, final_faces)
    return final_obj


def main():
    args = parse_args()
    device = get_device(args.cpu)
    mesh, center, scale, losses = fit(args, device)
    path = save_result(mesh, center, scale, args.out_dir)
    np.savez(os.path.join(args.out_dir, "losses.npz"), **{k: np.asarray(v) for k, v in losses.items()})
    print(f"saved {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
