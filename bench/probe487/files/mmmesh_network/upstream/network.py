import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from pointnet2 import pointnet2_utils
from smpl_utils import SMPL


class AnchorInit(object):
    """Fixed anchor grid in the radar frame (x: range, y: azimuth, z: height)."""
    def __init__(self, x_min=-0.3, x_max=0.3, x_interval=0.3,
                 y_min=-0.3, y_max=0.3, y_interval=0.3,
                 z_min=-0.9, z_max=0.9, z_interval=0.3):
        self.x_min, self.x_max, self.x_interval = x_min, x_max, x_interval
        self.y_min, self.y_max, self.y_interval = y_min, y_max, y_interval
        self.z_min, self.z_max, self.z_interval = z_min, z_max, z_interval

    def get_anchors(self):
        xs = np.arange(self.x_min, self.x_max + 1e-6, self.x_interval)
        ys = np.arange(self.y_min, self.y_max + 1e-6, self.y_interval)
        zs = np.arange(self.z_min, self.z_max + 1e-6, self.z_interval)
        grid = np.stack(np.meshgrid(xs, ys, zs, indexing='ij'), axis=-1).reshape(-1, 3)
        return grid.astype(np.float32)


class BasePointNet(nn.Module):
    """Per-point MLP (shared) over the 6-dim radar points: x, y, z, doppler, snr, range."""
    def __init__(self, in_dim=6, dims=(8, 16, 24)):
        super().__init__()
        layers, c = [], in_dim
        for d in dims:
            layers += [nn.Conv1d(c, d, 1), nn.BatchNorm1d(d), nn.ReLU(inplace=True)]
            c = d
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        # x: (B*L, N, C)
        x = x.transpose(1, 2)
        x = self.mlp(x)
        return x.transpose(1, 2)


class AnchorPointNet(nn.Module):
    """Group radar points around each anchor (ball query) and pool them."""
    def __init__(self, radius=0.4, nsample=16, in_dim=24 + 3, out_dim=64):
        super().__init__()
        self.anchors = torch.from_numpy(AnchorInit().get_anchors())
        self.grouper = pointnet2_utils.QueryAndGroup(radius, nsample, use_xyz=True)
        self.mlp = nn.Sequential(
            nn.Conv2d(in_dim, 32, 1), nn.BatchNorm2d(32), nn.ReLU(inplace=True),
            nn.Conv2d(32, 48, 1), nn.BatchNorm2d(48), nn.ReLU(inplace=True),
            nn.Conv2d(48, out_dim, 1), nn.BatchNorm2d(out_dim), nn.ReLU(inplace=True))
        self.attn = nn.Linear(out_dim, 1)

    def forward(self, xyz, feat):
        # xyz: (B, N, 3), feat: (B, N, C)
        B = xyz.shape[0]
        anchors = self.anchors.to(xyz.device).unsqueeze(0).expand(B, -1, -1).contiguous()
        grouped = self.grouper(xyz.contiguous(), anchors, feat.transpose(1, 2).contiguous())
        grouped = self.mlp(grouped)                       # (B, C, A, S)
        pooled = grouped.max(dim=-1)[0].transpose(1, 2)   # (B, A, C)
        w = torch.softmax(self.attn(pooled), dim=1)
        return (pooled * w).sum(dim=1), pooled


class GlobalRNN(nn.Module):
    def __init__(self, in_dim=64, hidden=128, layers=3):
        super().__init__()
        self.rnn = nn.LSTM(in_dim, hidden, num_layers=layers, batch_first=True, dropout=0.1)

    def forward(self, x, h0=None):
        out, h = self.rnn(x, h0)
        return out, h


class SMPLHead(nn.Module):
    """Regress SMPL pose (24x6 rot6d), shape (10), translation (3), gender logit."""
    def __init__(self, in_dim=128):
        super().__init__()
        self.pose = nn.Sequential(nn.Linear(in_dim, 256), nn.ReLU(inplace=True), nn.Linear(256, 24 * 6))
        self.shape = nn.Sequential(nn.Linear(in_dim, 64), nn.ReLU(inplace=True), nn.Linear(64, 10))
        self.trans = nn.Sequential(nn.Linear(in_dim, 64), nn.ReLU(inplace=True), nn.Linear(64, 3))
        self.gender = nn.Linear(in_dim, 1)

    def forward(self, h):
        return self.pose(h), self.shape(h), self.trans(h), torch.sigmoid(self.gender(h))


def rot6d_to_rotmat(x):
    """Zhou et al. continuous 6D rotation -> 3x3 rotation matrix."""
    x = x.view(-1, 3, 2)
    a1, a2 = x[:, :, 0], x[:, :, 1]
    b1 = F.normalize(a1, dim=1)
    b2 = F.normalize(a2 - (b1 * a2).sum(dim=1, keepdim=True) * b1, dim=1)
    b3 = torch.cross(b1, b2, dim=1)
    return torch.stack([b1, b2, b3], dim=-1)


class mmWaveModel(nn.Module):
    def __init__(self, smpl_dir='./smpl_models'):
        super().__init__()
        self.base = BasePointNet()
        self.anchor = AnchorPointNet()
        self.rnn = GlobalRNN()
        self.head = SMPLHead()
        self.smpl_m = SMPL(smpl_dir, gender='m')
        self.smpl_f = SMPL(smpl_dir, gender='f')

    def forward(self, pc, h0=None):
        # pc: (B, L, N, 6) radar point clouds over L frames
        B, L, N, C = pc.shape
        x = pc.view(B * L, N, C)
        feat = self.base(x)
        g, _ = self.anchor(x[..., :3], feat)
        g = g.view(B, L, -1)
        h, hn = self.rnn(g, h0)
        pose6d, betas, trans, gender = self.head(h)
        rotmat = rot6d_to_rotmat(pose6d.reshape(-1, 6)).view(B * L, 24, 3, 3)
        v_m, j_m = self.smpl_m(rotmat, betas.view(B * L, 10))
        v_f, j_f = self.smpl_f(rotmat, betas.view(B * L, 10))
        gw = gender.view(B * L, 1, 1)
        verts = gw * v_m + (1 - gw) * v_f + trans.view(B * L, 1, 3)
        joints = gw * j_m + (1 - gw) * j_f + trans.view(B * L, 1, 3)
        return dict(pose=pose6d, betas=betas, trans=trans, gender=gender,
                    verts=verts.view(B, L, -1, 3), joints=joints.view(B, L, -1, 3), hn=hn)


def init_hidden(batch_size, layers=3, hidden=128):
    h = torch.zeros(layers, batch_size, hidden).cuda()
    c = torch.zeros(layers, batch_size, hidden).cuda()
    return (h, c)
