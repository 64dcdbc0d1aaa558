"""
PointPillars-style LiDAR encoder used by LAV's perception model.

Points of every sweep are assigned to BEV pillars, decorated with pillar-relative offsets,
encoded by a small shared MLP and max-pooled per pillar, then scattered back to a dense BEV canvas.
Dynamic voxelization: there is no fixed max number of points per pillar.
"""
import torch
from torch import nn
import torch.nn.functional as F
from torch_scatter import scatter_mean, scatter_max


class DynamicPointNet(nn.Module):
    def __init__(self, num_input=9, num_features=[32, 32]):
        super().__init__()

        L = []
        for num_feature in num_features:
            L += [
                nn.Linear(num_input, num_feature),
                nn.BatchNorm1d(num_feature),
                nn.ReLU(inplace=True),
            ]
            num_input = num_feature

        self.net = nn.Sequential(*L)

    def forward(self, points, inverse_indices):
        """
        TODO: multiple layers
        """
        feat = self.net(points)
        feat_max = scatter_max(feat, inverse_indices, dim=0)[0]
        return feat_max


class PointPillarNet(nn.Module):
    def __init__(self, num_input=9, num_features=[32, 32],
                 min_x=-10, max_x=70,
                 min_y=-40, max_y=40,
                 pixels_per_meter=4):
        super().__init__()
        self.point_net = DynamicPointNet(num_input, num_features)

        self.min_x = min_x
        self.max_x = max_x
        self.min_y = min_y
        self.max_y = max_y
        self.pixels_per_meter = pixels_per_meter
        self.nx = (max_x - min_x) * pixels_per_meter
        self.ny = (max_y - min_y) * pixels_per_meter
        self.output_dim = num_features[-1]

    def decorate(self, points, unique_coords, inverse_indices):
        dtype = points.dtype
        x_centers = unique_coords[inverse_indices][:, 2:3].to(dtype) / self.pixels_per_meter + self.min_x
        y_centers = unique_coords[inverse_indices][:, 1:2].to(dtype) / self.pixels_per_meter + self.min_y

        xyz = points[:, :3]

        points_cluster = xyz - scatter_mean(xyz, inverse_indices, dim=0)[inverse_indices]

        points_xp = xyz[:, :1] - x_centers
        points_yp = xyz[:, 1:2] - y_centers

        features = torch.cat([points, points_cluster, points_xp, points_yp], dim=-1)
        return features

    def grid_locations(self, points):
        keep = (points[:, 0] >= self.min_x) & (points[:, 0] < self.max_x) & \
               (points[:, 1] >= self.min_y) & (points[:, 1] < self.max_y)
        points = points[keep, :]

        coords = (points[:, [0, 1]] - torch.tensor([self.min_x, self.min_y], device=points.device)) * self.pixels_per_meter
        coords = coords.long()

        return points, coords

    def pillar_points(self, lidars, num_points):
        points, coords = [], []
        for batch_id, (lidar, num_point) in enumerate(zip(lidars, num_points)):
            point, coord = self.grid_locations(lidar[:num_point])

            points.append(point)
            coords.append(F.pad(coord, (1, 0), mode='constant', value=batch_id))

        points = torch.cat(points)
        coords = torch.cat(coords)

        unique_coords, inverse_indices = coords.unique(return_inverse=True, dim=0)

        decorated_points = self.decorate(points, unique_coords, inverse_indices)

        return decorated_points, unique_coords, inverse_indices

    def scatter_points(self, features, coords, batch_size):
        canvas = torch.zeros(batch_size, features.shape[1], self.ny, self.nx, dtype=features.dtype,
                             device=features.device)
        canvas[coords[:, 0], :, torch.clamp(self.ny - 1 - coords[:, 1], 0, self.ny - 1),
               torch.clamp(coords[:, 2], 0, self.nx - 1)] = features
        return canvas

    def forward(self, lidars, num_points):
        decorated_points, unique_coords, inverse_indices = self.pillar_points(lidars, num_points)
        features = self.point_net(decorated_points, inverse_indices)
        return self.scatter_points(features, unique_coords, len(lidars))


class PointPillarBackbone(nn.Module):
    """PointPillarNet + a small 2-D conv trunk producing the BEV feature map for the detection heads."""

    def __init__(self, num_input=9, num_features=[32, 32], min_x=-10, max_x=70, min_y=-40, max_y=40,
                 pixels_per_meter=4, out_channels=128):
        super().__init__()
        self.pillars = PointPillarNet(num_input, num_features, min_x, max_x, min_y, max_y, pixels_per_meter)
        c = num_features[-1]
        self.block1 = self._block(c, 64, stride=2)
        self.block2 = self._block(64, 128, stride=2)
        self.block3 = self._block(128, 256, stride=2)
        self.up1 = nn.ConvTranspose2d(64, out_channels, 1, stride=1)
        self.up2 = nn.ConvTranspose2d(128, out_channels, 2, stride=2)
        self.up3 = nn.ConvTranspose2d(256, out_channels, 4, stride=4)

    @staticmethod
    def _block(cin, cout, stride):
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        )

    def forward(self, lidars, num_points):
        bev = self.pillars(lidars, num_points)
        x1 = self.block1(bev)
        x2 = self.block2(x1)
        x3 = self.block3(x2)
        return torch.cat([self.up1(x1), self.up2(x2), self.up3(x3)], dim=1)


def pillar_occupancy(lidars, num_points, min_x=-10, max_x=70, min_y=-40, max_y=40, pixels_per_meter=4):
    """Debug helper: number of points per pillar as a dense (B, H, W) map."""
    net = PointPillarNet(9, [32], min_x, max_x, min_y, max_y, pixels_per_meter)
    out = []
    for lidar, n in zip(lidars, num_points):
        pts, coords = net.grid_locations(lidar[:n])
        flat = coords[:, 1] * net.nx + coords[:, 0]
        counts = torch.bincount(flat, minlength=net.nx * net.ny)
        out.append(counts.view(net.ny, net.nx))
    return torch.stack(out)
