"""
# Created: 2023-07-18 15:08
# Copyright (C) 2023-now, RPL, KTH Royal Institute of Technology
#
# Description: Voxelization + pillar encoders shared by DeFlow / FastFlow3D / ZeroFlow.
#   Dynamic voxelization and the point->voxel scatter come from the (stripped-down)
#   mmcv CUDA ops vendored in assets/cuda/mmcv.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from assets.cuda.mmcv import Voxelization
from assets.cuda.mmcv import DynamicScatter


class HardVoxelizer(nn.Module):

    def __init__(self, voxel_size, point_cloud_range, max_points_per_voxel: int = 20):
        super().__init__()
        assert max_points_per_voxel > 0, f"max_points_per_voxel must be > 0, got {max_points_per_voxel}"

        self.voxelizer = Voxelization(voxel_size,
                                      point_cloud_range,
                                      max_points_per_voxel,
                                      deterministic=False)

    def forward(self, inputs: torch.Tensor):
        assert isinstance(inputs, torch.Tensor), f"inputs must be a torch.Tensor, got {type(inputs)}"
        return self.voxelizer(inputs)


class DynamicVoxelizer(nn.Module):

    def __init__(self, voxel_size, point_cloud_range):
        super().__init__()
        self.voxel_size = voxel_size
        self.point_cloud_range = point_cloud_range
        # max_num_points=-1 -> dynamic voxelization, returns per-point voxel coordinates
        self.voxelizer = Voxelization(voxel_size, point_cloud_range, max_num_points=-1)

    def forward(self, points):
        batch_results = []
        for batch_idx in range(len(points)):
            batch_points = points[batch_idx]
            valid_point_idxes = torch.arange(batch_points.shape[0], device=batch_points.device)
            not_nan_mask = ~torch.isnan(batch_points).any(dim=1)
            batch_non_nan_points = batch_points[not_nan_mask]
            valid_point_idxes = valid_point_idxes[not_nan_mask]
            batch_voxel_coords = self.voxelizer(batch_non_nan_points)
            # If any of the coords are -1, then the point is not in the voxel grid and should be discarded
            batch_voxel_coords_mask = (batch_voxel_coords != -1).all(dim=1)

            valid_batch_voxel_coords = batch_voxel_coords[batch_voxel_coords_mask]
            valid_batch_non_nan_points = batch_non_nan_points[batch_voxel_coords_mask]
            valid_point_idxes = valid_point_idxes[batch_voxel_coords_mask]

            batch_results.append({
                "points": valid_batch_non_nan_points,
                "voxel_coords": valid_batch_voxel_coords,
                "point_idxes": valid_point_idxes,
            })
        return batch_results


def get_paddings_indicator(actual_num, max_num, axis=0):
    """Create boolean mask by actually number of a padded tensor."""
    actual_num = torch.unsqueeze(actual_num, axis + 1)
    max_num_shape = [1] * len(actual_num.shape)
    max_num_shape[axis + 1] = -1
    max_num = torch.arange(max_num, dtype=torch.int, device=actual_num.device).view(max_num_shape)
    paddings_indicator = actual_num.int() > max_num
    return paddings_indicator


class PFNLayer(nn.Module):
    def __init__(self, in_channels, out_channels, norm_cfg=True, last_layer=False, mode="max"):
        super().__init__()
        self.last_vfe = last_layer
        if not self.last_vfe:
            out_channels = out_channels // 2
        self.units = out_channels
        self.norm = nn.BatchNorm1d(self.units, eps=1e-3, momentum=0.01) if norm_cfg else nn.Identity()
        self.linear = nn.Linear(in_channels, self.units, bias=False)
        assert mode in ["max", "avg"]
        self.mode = mode

    def forward(self, inputs, num_voxels=None, aligned_distance=None):
        x = self.linear(inputs)
        x = self.norm(x.permute(0, 2, 1).contiguous()).permute(0, 2, 1).contiguous()
        x = F.relu(x)

        if self.mode == "max":
            if aligned_distance is not None:
                x = x.mul(aligned_distance.unsqueeze(-1))
            x_max = torch.max(x, dim=1, keepdim=True)[0]
        elif self.mode == "avg":
            if aligned_distance is not None:
                x = x.mul(aligned_distance.unsqueeze(-1))
            x_max = x.sum(dim=1, keepdim=True) / num_voxels.type_as(inputs).view(-1, 1, 1)

        if self.last_vfe:
            return x_max
        x_repeat = x_max.repeat(1, inputs.shape[1], 1)
        x_concatenated = torch.cat([x, x_repeat], dim=2)
        return x_concatenated


class DynamicPillarFeatureNet(nn.Module):
    """Pillar feature net with dynamic voxelization: no padding to max points per pillar."""

    def __init__(self, in_channels, feat_channels, voxel_size, point_cloud_range, mode="max"):
        super().__init__()
        assert len(feat_channels) > 0
        self.in_channels = in_channels + 6  # xyz offsets to cluster center and pillar center
        feat_channels = [self.in_channels] + list(feat_channels)
        self.pfn_layers = nn.ModuleList()
        for i in range(len(feat_channels) - 1):
            in_filters = feat_channels[i]
            out_filters = feat_channels[i + 1]
            if i > 0:
                in_filters *= 2
            self.pfn_layers.append(nn.Sequential(
                nn.Linear(in_filters, out_filters, bias=False),
                nn.BatchNorm1d(out_filters, eps=1e-3, momentum=0.01),
                nn.ReLU(inplace=True)))
        self.num_pfn = len(self.pfn_layers)

        self.vx = voxel_size[0]
        self.vy = voxel_size[1]
        self.vz = voxel_size[2]
        self.x_offset = self.vx / 2 + point_cloud_range[0]
        self.y_offset = self.vy / 2 + point_cloud_range[1]
        self.z_offset = self.vz / 2 + point_cloud_range[2]
        self.point_cloud_range = point_cloud_range

        self.pfn_scatter = DynamicScatter(voxel_size, point_cloud_range, (mode != "max"))
        self.cluster_scatter = DynamicScatter(voxel_size, point_cloud_range, average_points=True)

    def map_voxel_center_to_point(self, voxel_mean, voxel2point_inds):
        return voxel_mean[voxel2point_inds]

    def forward(self, features, coors):
        features_ls = [features]
        # Find distance of x, y, and z from cluster center
        voxel_mean, mean_coors, voxel2point_inds = self.cluster_scatter(features, coors, return_inverse=True)
        points_mean = self.map_voxel_center_to_point(voxel_mean, voxel2point_inds)
        f_cluster = features[:, :3] - points_mean[:, :3]
        features_ls.append(f_cluster)

        # Find distance of x, y, and z from pillar center
        f_center = features.new_zeros(size=(features.size(0), 3))
        f_center[:, 0] = features[:, 0] - (coors[:, 3].type_as(features) * self.vx + self.x_offset)
        f_center[:, 1] = features[:, 1] - (coors[:, 2].type_as(features) * self.vy + self.y_offset)
        f_center[:, 2] = features[:, 2] - (coors[:, 1].type_as(features) * self.vz + self.z_offset)
        features_ls.append(f_center)

        features = torch.cat(features_ls, dim=-1)
        for i, pfn in enumerate(self.pfn_layers):
            point_feats = pfn(features)
            voxel_feats, voxel_coors, inv = self.pfn_scatter(point_feats, coors, return_inverse=True)
            if i != len(self.pfn_layers) - 1:
                # need to concat voxel feats if it is not the last pfn
                feat_per_point = self.map_voxel_center_to_point(voxel_feats, inv)
                features = torch.cat([point_feats, feat_per_point], dim=1)

        return voxel_feats, voxel_coors


def scatter_max_torch(src, index, num_segments):
    """Pure-PyTorch segment max used by the CPU unit tests (no mmcv build needed).

    src: (N, C) point features, index: (N,) voxel id per point.
    """
    out = src.new_full((num_segments, src.shape[1]), float("-inf"))
    out.scatter_reduce_(0, index.unsqueeze(-1).expand_as(src), src, reduce="amax", include_self=True)
    return out


def scatter_mean_torch(src, index, num_segments):
    out = src.new_zeros((num_segments, src.shape[1]))
    out.index_add_(0, index, src)
    count = torch.bincount(index, minlength=num_segments).clamp(min=1).unsqueeze(-1).type_as(src)
    return out / count
