# ----------------------------------------------------------------------------
# -                        Open3D: www.open3d.org                            -
# ----------------------------------------------------------------------------
# Copyright (c) 2018-2023 www.open3d.org
# SPDX-License-Identifier: MIT
# ----------------------------------------------------------------------------

# examples/python/t_reconstruction_system/integrate_torch.py
#
# TSDF integration into a VoxelBlockGrid where the per-voxel update is written
# in PyTorch and shares memory with Open3D through DLPack (zero copy on the
# same device). Useful as a template for learned fusion weights.

import os
import time
import argparse

import numpy as np
import open3d as o3d
import open3d.core as o3c
import torch
import torch.utils.dlpack
from tqdm import tqdm

from common import load_rgbd_file_names, load_depth_file_names, load_intrinsic, load_extrinsics, get_default_dataset


def o3c_to_torch(tensor):
    return torch.utils.dlpack.from_dlpack(tensor.to_dlpack())


def torch_to_o3c(tensor):
    return o3c.Tensor.from_dlpack(torch.utils.dlpack.to_dlpack(tensor))


class FusionWeightNet(torch.nn.Module):
    """Tiny MLP predicting a confidence for each depth observation."""

    def __init__(self, hidden=32):
        super().__init__()
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(3, hidden), torch.nn.ReLU(inplace=True),
            torch.nn.Linear(hidden, hidden), torch.nn.ReLU(inplace=True),
            torch.nn.Linear(hidden, 1), torch.nn.Sigmoid())

    def forward(self, sdf, depth, view_cos):
        x = torch.stack([sdf, depth, view_cos], dim=-1)
        return self.mlp(x).squeeze(-1)


def integrate(depth_file_names, color_file_names, intrinsic, extrinsics, config, weight_net):
    n_files = len(depth_file_names)
    device = o3d.core.Device(config.device)

    vbg = o3d.t.geometry.VoxelBlockGrid(
        attr_names=('tsdf', 'weight', 'color'),
        attr_dtypes=(o3c.float32, o3c.float32, o3c.float32),
        attr_channels=((1), (1), (3)),
        voxel_size=3.0 / 512,
        block_resolution=8,
        block_count=100000,
        device=device)

    intrinsic_dev = intrinsic.to(device)
    start = time.time()
    for i in tqdm(range(n_files)):
        depth = o3d.t.io.read_image(depth_file_names[i]).to(device)
        color = o3d.t.io.read_image(color_file_names[i]).to(device)
        extrinsic = extrinsics[i]

        frustum_block_coords = vbg.compute_unique_block_coordinates(
            depth, intrinsic, extrinsic, config.depth_scale, config.depth_max)
        vbg.hashmap().activate(frustum_block_coords)

        # Find buf indices in the underlying engine
        buf_indices, masks = vbg.hashmap().find(frustum_block_coords)
        o3d.core.cuda.synchronize()  # hashmap lookup

        voxel_coords, voxel_indices = vbg.voxel_coordinates_and_flattened_indices(buf_indices)
        o3d.core.cuda.synchronize()  # voxel coordinates

        # Project voxels to the depth image
        extrinsic_dev = extrinsic.to(device, o3c.float32)
        xyz = extrinsic_dev[:3, :3] @ voxel_coords.T() + extrinsic_dev[:3, 3:]
        uvd = intrinsic_dev @ xyz
        d = uvd[2]
        u = (uvd[0] / d).round().to(o3c.int64)
        v = (uvd[1] / d).round().to(o3c.int64)

        mask_proj = (d > 0) & (u >= 0) & (v >= 0) & (u < depth.columns) & (v < depth.rows)
        v_proj = v[mask_proj]
        u_proj = u[mask_proj]
        d_proj = d[mask_proj]
        depth_readings = depth.as_tensor()[v_proj, u_proj, 0].to(o3c.float32) / config.depth_scale
        sdf = depth_readings - d_proj

        mask_inlier = (depth_readings > 0) & (depth_readings < config.depth_max) & (sdf >= -config.sdf_trunc)
        sdf[sdf >= config.sdf_trunc] = config.sdf_trunc
        sdf = sdf / config.sdf_trunc

        # --- learned fusion weight in PyTorch (zero-copy views) ---
        sdf_t = o3c_to_torch(sdf)
        depth_t = o3c_to_torch(depth_readings)
        cos_t = torch.ones_like(depth_t)
        with torch.no_grad():
            w_obs = weight_net(sdf_t, depth_t, cos_t)
        w_obs = torch_to_o3c(w_obs.contiguous())

        weight = vbg.attribute('weight').reshape((-1, 1))
        tsdf = vbg.attribute('tsdf').reshape((-1, 1))

        valid_voxel_indices = voxel_indices[mask_proj][mask_inlier]
        w = weight[valid_voxel_indices]
        wp = w + w_obs[mask_inlier].reshape(w.shape)

        tsdf[valid_voxel_indices] = (tsdf[valid_voxel_indices] * w +
                                     sdf[mask_inlier].reshape(w.shape) *
                                     w_obs[mask_inlier].reshape(w.shape)) / (wp)

        color_readings = color.as_tensor()[v_proj, u_proj].to(o3c.float32)
        colors = vbg.attribute('color').reshape((-1, 3))
        colors[valid_voxel_indices] = (colors[valid_voxel_indices] * w +
                                       color_readings[mask_inlier] *
                                       w_obs[mask_inlier].reshape(w.shape)) / (wp)
        weight[valid_voxel_indices] = wp
        o3d.core.cuda.synchronize()

    dt = time.time() - start
    print('Finished integrating {} frames in {} seconds'.format(n_files, dt))
    return vbg


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--path_dataset', type=str, default=None)
    parser.add_argument('--path_trajectory', type=str, default=None)
    parser.add_argument('--path_npz', type=str, default='vbg_torch.npz')
    parser.add_argument('--weights', type=str, default=None, help='FusionWeightNet checkpoint')
    parser.add_argument('--device', type=str, default='CUDA:0', help='Open3D device')
    parser.add_argument('--depth_scale', type=float, default=1000.0)
    parser.add_argument('--depth_max', type=float, default=3.0)
    parser.add_argument('--sdf_trunc', type=float, default=0.04)
    config = parser.parse_args()

    if config.path_dataset is None:
        config.path_dataset = get_default_dataset(config)

    depth_file_names, color_file_names = load_rgbd_file_names(config)
    intrinsic = load_intrinsic(config)
    extrinsics = load_extrinsics(config.path_trajectory, config)

    weight_net = FusionWeightNet()
    if config.weights is not None:
        weight_net.load_state_dict(torch.load(config.weights, map_location='cpu'))
    weight_net = weight_net.cuda().eval()

    vbg = integrate(depth_file_names, color_file_names, intrinsic, extrinsics, config, weight_net)
    vbg.save(config.path_npz)

    pcd = vbg.extract_point_cloud()
    o3d.visualization.draw([pcd])

    mesh = vbg.extract_triangle_mesh()
    o3d.visualization.draw([mesh.to_legacy()])
