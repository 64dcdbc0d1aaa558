import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_geometric.nn import MLP, PointConv, fps, global_max_pool, radius


class SAModule(nn.Module):
    """PointNet++ set-abstraction layer built on torch_geometric (torch_cluster ops)."""

    def __init__(self, ratio, r, nn_module, max_num_neighbors=64):
        super().__init__()
        self.ratio = ratio
        self.r = r
        self.max_num_neighbors = max_num_neighbors
        self.conv = PointConv(nn_module, add_self_loops=False)

    def forward(self, x, pos, batch):
        idx = fps(pos, batch, ratio=self.ratio)
        row, col = radius(pos, pos[idx], self.r, batch, batch[idx],
                          max_num_neighbors=self.max_num_neighbors)
        edge_index = torch.stack([col, row], dim=0)
        x_dst = None if x is None else x[idx]
        x = self.conv((x, x_dst), (pos, pos[idx]), edge_index)
        pos, batch = pos[idx], batch[idx]
        return x, pos, batch


class GlobalSAModule(nn.Module):
    def __init__(self, nn_module):
        super().__init__()
        self.nn = nn_module

    def forward(self, x, pos, batch):
        x = self.nn(torch.cat([x, pos], dim=1))
        x = global_max_pool(x, batch)
        pos = pos.new_zeros((x.size(0), 3))
        batch = torch.arange(x.size(0), device=batch.device)
        return x, pos, batch


class PointNet(nn.Module):
    """PointNet++ (SSG) on stacked mmWave frames.

    Input is a dense (B, N, 3) tensor from the dataset collate; it is
    flattened into the torch_geometric (pos, batch) format here.
    """

    def __init__(self, info, ratio=(0.5, 0.25), radii=(0.2, 0.4), dropout=0.5):
        super().__init__()
        self.task = info['task']
        self.num_keypoints = info.get('num_keypoints', 0)
        out_dim = info['num_classes'] if self.task != 'keypoint' else self.num_keypoints * 3

        self.sa1 = SAModule(ratio[0], radii[0], MLP([3, 64, 64, 128]))
        self.sa2 = SAModule(ratio[1], radii[1], MLP([128 + 3, 128, 128, 256]))
        self.sa3 = GlobalSAModule(MLP([256 + 3, 256, 512, 1024]))
        self.mlp = MLP([1024, 512, 256, out_dim], dropout=dropout, norm=None)

    def forward(self, data):
        B, N, _ = data.shape
        pos = data.reshape(B * N, 3)
        batch = torch.arange(B, device=data.device).repeat_interleave(N)
        x, pos, batch = self.sa1(None, pos, batch)
        x, pos, batch = self.sa2(x, pos, batch)
        x, pos, batch = self.sa3(x, pos, batch)
        out = self.mlp(x)
        if self.task == 'keypoint':
            out = out.view(B, self.num_keypoints, 3)
        return out
