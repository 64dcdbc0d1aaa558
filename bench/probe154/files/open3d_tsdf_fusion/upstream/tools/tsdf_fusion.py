#!/usr/bin/env python
"""Fuse posed RGB-D frames into a voxel block grid with Open3D's tensor API,
optionally using depth predicted by a PyTorch network instead of sensor depth.

    python tools/tsdf_fusion.py --dataset data/scannet/scene0000_00 --device CUDA:0
    python tools/tsdf_fusion.py --dataset ... --pred-depth checkpoints/depthnet.pth

Tensors are handed between torch and Open3D through DLPack, so nothing is
copied back to the host between the network and the integration step.
"""
import argparse
import glob
import json
import os
import time

import numpy as np
import open3d as o3d
import open3d.core as o3c
import torch
import torch.utils.dlpack

from depthnet import DepthNet


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", required=True)
    p.add_argument("--device", default="CUDA:0", help="Open3D device string, e.g. CPU:0 or CUDA:0")
    p.add_argument("--voxel-size", type=float, default=0.0058)
    p.add_argument("--block-resolution", type=int, default=16)
    p.add_argument("--block-count", type=int, default=50000)
    p.add_argument("--depth-scale", type=float, default=1000.0)
    p.add_argument("--depth-max", type=float, default=3.0)
    p.add_argument("--trunc-multiplier", type=float, default=8.0)
    p.add_argument("--pred-depth", default=None, help="checkpoint of a depth network; use its output instead of sensor depth")
    p.add_argument("--every", type=int, default=1)
    p.add_argument("--out", default="output/mesh.ply")
    return p.parse_args()


def load_intrinsic(path):
    with open(path) as f:
        K = np.array(json.load(f)["intrinsic_matrix"]).reshape(3, 3).T
    return o3c.Tensor(K, o3c.Dtype.Float64)


def list_frames(root):
    colors = sorted(glob.glob(os.path.join(root, "color", "*.jpg")))
    depths = sorted(glob.glob(os.path.join(root, "depth", "*.png")))
    poses = sorted(glob.glob(os.path.join(root, "pose", "*.txt")))
    assert len(colors) == len(depths) == len(poses), "frame count mismatch"
    return list(zip(colors, depths, poses))


def torch_to_o3d(t):
    return o3c.Tensor.from_dlpack(torch.utils.dlpack.to_dlpack(t.contiguous()))


def o3d_to_torch(t):
    return torch.utils.dlpack.from_dlpack(t.to_dlpack())


class DepthPredictor:
    """Wraps a monocular depth network; returns metric depth as an Open3D image."""

    def __init__(self, ckpt, torch_device):
        self.device = torch_device
        self.net = DepthNet()
        state = torch.load(ckpt, map_location="cpu")
        self.net.load_state_dict(state["model"])
        self.net = self.net.to(self.device).eval().half()

    @torch.no_grad()
    def __call__(self, color_o3d):
        rgb = o3d_to_torch(color_o3d.as_tensor()).to(self.device)
        x = rgb.permute(2, 0, 1)[None].half() / 255.0
        depth = self.net(x)[0, 0].float()  # metres, HxW
        depth_mm = (depth * 1000.0).to(torch.uint16 if hasattr(torch, "uint16") else torch.int32)
        return o3d.t.geometry.Image(torch_to_o3d(depth_mm[..., None]))


def main():
    args = parse_args()
    device = o3c.Device(args.device)
    if device.get_type() == o3c.Device.DeviceType.CUDA and not o3d.core.cuda.is_available():
        print("Open3D was built without CUDA, falling back to CPU:0")
        device = o3c.Device("CPU:0")
    torch_device = torch.device("cuda:0" if device.get_type() == o3c.Device.DeviceType.CUDA else "cpu")

    intrinsic = load_intrinsic(os.path.join(args.dataset, "intrinsic.json"))
    frames = list_frames(args.dataset)[:: args.every]

    vbg = o3d.t.geometry.VoxelBlockGrid(
        attr_names=("tsdf", "weight", "color"),
        attr_dtypes=(o3c.float32, o3c.float32, o3c.float32),
        attr_channels=((1), (1), (3)),
        voxel_size=args.voxel_size,
        block_resolution=args.block_resolution,
        block_count=args.block_count,
        device=device,
    )

    predictor = DepthPredictor(args.pred_depth, torch_device) if args.pred_depth else None

    t0 = time.time()
    for i, (c_path, d_path, p_path) in enumerate(frames):
        color = o3d.t.io.read_image(c_path).to(device)
        if predictor is not None:
            depth = predictor(color).to(device)
        else:
            depth = o3d.t.io.read_image(d_path).to(device)
        pose = np.loadtxt(p_path)
        if not np.all(np.isfinite(pose)):
            continue
        extrinsic = o3c.Tensor(np.linalg.inv(pose), o3c.Dtype.Float64)

        frustum_block_coords = vbg.compute_unique_block_coordinates(
            depth, intrinsic, extrinsic, args.depth_scale, args.depth_max,
            trunc_voxel_multiplier=args.trunc_multiplier)
        vbg.integrate(frustum_block_coords, depth, color, intrinsic, extrinsic,
                      args.depth_scale, args.depth_max, trunc_voxel_multiplier=args.trunc_multiplier)

        if i % 100 == 0:
            dt = time.time() - t0
            print(f"[{i}/{len(frames)}] {dt:.1f}s ({i / max(dt, 1e-6):.1f} fps)")
            if torch_device.type == "cuda":
                print(f"    torch allocated: {torch.cuda.memory_allocated() / 2**20:.0f} MB")

    mesh = vbg.extract_triangle_mesh()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    o3d.io.write_triangle_mesh(args.out, mesh.to_legacy())
    pcd = vbg.extract_point_cloud()
    o3d.t.io.write_point_cloud(args.out.replace(".ply", "_pcd.ply"), pcd.cpu())
    print("saved", args.out)


if __name__ == "__main__":
    main()
