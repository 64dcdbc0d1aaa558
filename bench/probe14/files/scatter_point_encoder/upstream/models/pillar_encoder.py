"""Dynamic voxel / pillar feature encoder for LiDAR point clouds.

Points are grouped into pillars with a unique() over voxel coordinates, per-point
features are augmented with offsets to the pillar mean, passed through a small
PointNet and max-pooled back into the pillar with torch_scatter. Finally pillars
are scattered into a BEV pseudo-image.
"""
from typing import List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_scatter import scatter_max, scatter_mean


class PFNLayer(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, last_layer: bool = False):
        super().__init__()
        self.last_vfe = last_layer
        if not self.last_vfe:
            out_channels = out_channels // 2
        self.linear = nn.Linear(in_channels, out_channels, bias=False)
        self.norm = nn.BatchNorm1d(out_channels, eps=1e-3, momentum=0.01)

    def forward(self, inputs: torch.Tensor, unq_inv: torch.Tensor) -> torch.Tensor:
        x = self.linear(inputs)
        x = self.norm(x)
        x = F.relu(x)
        x_max = scatter_max(x, unq_inv, dim=0)[0]
        if self.last_vfe:
            return x_max
        return torch.cat([x, x_max[unq_inv, :]], dim=1)


class DynamicPillarVFE(nn.Module):
    def __init__(self, num_point_features: int, voxel_size: List[float], grid_size: List[int],
                 point_cloud_range: List[float], num_filters=(64, 64), with_distance=False):
        super().__init__()
        self.with_distance = with_distance
        num_point_features += 6
        if self.with_distance:
            num_point_features += 1
        num_filters = [num_point_features] + list(num_filters)
        layers = []
        for i in range(len(num_filters) - 1):
            layers.append(PFNLayer(num_filters[i], num_filters[i + 1], last_layer=(i >= len(num_filters) - 2)))
        self.pfn_layers = nn.ModuleList(layers)

        self.register_buffer("voxel_size", torch.tensor(voxel_size, dtype=torch.float32), persistent=False)
        self.register_buffer("grid_size", torch.tensor(grid_size, dtype=torch.int64), persistent=False)
        self.register_buffer("pc_range", torch.tensor(point_cloud_range, dtype=torch.float32), persistent=False)
        self.scale_xy = grid_size[0] * grid_size[1]
        self.scale_y = grid_size[1]

    def forward(self, points: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        """points: [N, 1 + C] with the batch index in column 0."""
        points_coords = torch.floor((points[:, [1, 2]] - self.pc_range[[0, 1]]) / self.voxel_size[[0, 1]]).int()
        mask = ((points_coords >= 0) & (points_coords < self.grid_size[[0, 1]])).all(dim=1)
        points = points[mask]
        points_coords = points_coords[mask]
        points_xyz = points[:, [1, 2, 3]].contiguous()

        merge_coords = points[:, 0].int() * self.scale_xy + points_coords[:, 0] * self.scale_y + points_coords[:, 1]
        unq_coords, unq_inv, unq_cnt = torch.unique(merge_coords, return_inverse=True, return_counts=True, dim=0)

        points_mean = scatter_mean(points_xyz, unq_inv, dim=0)
        f_cluster = points_xyz - points_mean[unq_inv, :]

        f_center = torch.zeros_like(points_xyz)
        f_center[:, 0] = points_xyz[:, 0] - (points_coords[:, 0].to(points_xyz.dtype) * self.voxel_size[0]
                                             + self.voxel_size[0] / 2 + self.pc_range[0])
        f_center[:, 1] = points_xyz[:, 1] - (points_coords[:, 1].to(points_xyz.dtype) * self.voxel_size[1]
                                             + self.voxel_size[1] / 2 + self.pc_range[1])
        f_center[:, 2] = points_xyz[:, 2] - self.pc_range[2]

        features = [points[:, 1:], f_cluster, f_center]
        if self.with_distance:
            features.append(torch.norm(points[:, 1:4], 2, dim=1, keepdim=True))
        features = torch.cat(features, dim=-1)

        for pfn in self.pfn_layers:
            features = pfn(features, unq_inv)

        unq_coords = unq_coords.int()
        voxel_coords = torch.stack((unq_coords // self.scale_xy,
                                    (unq_coords % self.scale_xy) // self.scale_y,
                                    unq_coords % self.scale_y,
                                    torch.zeros(unq_coords.shape[0], device=unq_coords.device, dtype=torch.int32)),
                                   dim=1)
        voxel_coords = voxel_coords[:, [0, 3, 2, 1]]
        return features, voxel_coords


class PointPillarScatter(nn.Module):
    def __init__(self, num_bev_features: int, grid_size: List[int]):
        super().__init__()
        self.num_bev_features = num_bev_features
        self.nx, self.ny, self.nz = grid_size

    def forward(self, pillar_features: torch.Tensor, coords: torch.Tensor, batch_size: int) -> torch.Tensor:
        batch_spatial_features = []
        for batch_idx in range(batch_size):
            spatial_feature = torch.zeros(self.num_bev_features, self.nz * self.nx * self.ny,
                                          dtype=pillar_features.dtype, device=pillar_features.device)
            batch_mask = coords[:, 0] == batch_idx
            this_coords = coords[batch_mask, :]
            indices = this_coords[:, 1] + this_coords[:, 2] * self.nx + this_coords[:, 3]
            indices = indices.type(torch.long)
            spatial_feature[:, indices] = pillar_features[batch_mask, :].t()
            batch_spatial_features.append(spatial_feature)
        out = torch.stack(batch_spatial_features, 0)
        return out.view(batch_size, self.num_bev_features * self.nz, self.ny, self.nx)


def pillar_height_stats(points_z: torch.Tensor, unq_inv: torch.Tensor, n_pillars: int) -> torch.Tensor:
    """Per-pillar max height, written with core PyTorch so it can be exported to ONNX."""
    out = torch.full((n_pillars,), float("-inf"), device=points_z.device, dtype=points_z.dtype)
    return torch.scatter_reduce(out, 0, unq_inv, points_z, reduce="amax", include_self=True)


if __name__ == "__main__":
    vfe = DynamicPillarVFE(4, [0.16, 0.16, 4], [432, 496, 1], [0, -39.68, -3, 69.12, 39.68, 1]).cuda()
    scatter = PointPillarScatter(64, [432, 496, 1])
    pts = torch.rand(20000, 5, device="cuda")
    pts[:, 0] = (pts[:, 0] * 2).floor()
    pts[:, 1] *= 69.12
    pts[:, 2] = pts[:, 2] * 79.36 - 39.68
    feats, coords = vfe(pts)
    bev = scatter(feats, coords, batch_size=2)
    print(bev.shape, bev.device)
