"""
DocGeoNet: geometric representation learning for document image rectification.

Two auxiliary branches (3D shape -> dense 3D coordinates, text lines -> line
heatmap) share a CNN encoder with the rectification branch; their features are
fused and decoded by a light transformer into a backward map.
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

from .extractor import BasicEncoder
from .position_encoding import build_position_encoding


class ResidualBlock(nn.Module):
    def __init__(self, in_planes, planes, norm_fn='group', stride=1):
        super(ResidualBlock, self).__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, padding=1, stride=stride)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, padding=1)
        self.relu = nn.ReLU(inplace=True)
        num_groups = planes // 8
        if norm_fn == 'group':
            self.norm1 = nn.GroupNorm(num_groups=num_groups, num_channels=planes)
            self.norm2 = nn.GroupNorm(num_groups=num_groups, num_channels=planes)
            norm3 = nn.GroupNorm(num_groups=num_groups, num_channels=planes)
        elif norm_fn == 'batch':
            self.norm1 = nn.BatchNorm2d(planes)
            self.norm2 = nn.BatchNorm2d(planes)
            norm3 = nn.BatchNorm2d(planes)
        else:
            self.norm1 = nn.InstanceNorm2d(planes)
            self.norm2 = nn.InstanceNorm2d(planes)
            norm3 = nn.InstanceNorm2d(planes)
        if stride == 1 and in_planes == planes:
            self.downsample = None
        else:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_planes, planes, kernel_size=1, stride=stride), norm3)

    def forward(self, x):
        y = self.relu(self.norm1(self.conv1(x)))
        y = self.relu(self.norm2(self.conv2(y)))
        if self.downsample is not None:
            x = self.downsample(x)
        return self.relu(x + y)


class SegHead(nn.Module):
    """Small decoder used by the 3D-shape (3 channels) and text-line (1 channel) branches."""

    def __init__(self, in_dim, out_dim, mid_dim=64):
        super(SegHead, self).__init__()
        self.block = nn.Sequential(
            nn.Conv2d(in_dim, mid_dim, 3, padding=1),
            nn.BatchNorm2d(mid_dim),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_dim, mid_dim, 3, padding=1),
            nn.BatchNorm2d(mid_dim),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_dim, out_dim, 1),
        )

    def forward(self, x, size):
        return F.interpolate(self.block(x), size=size, mode='bilinear', align_corners=True)


class TransLayer(nn.Module):
    def __init__(self, d_model, nhead=8, dim_feedforward=1024, dropout=0.1):
        super(TransLayer, self).__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout)
        self.cross_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, tgt, memory, pos):
        q = k = tgt + pos
        tgt = self.norm1(tgt + self.dropout(self.self_attn(q, k, value=tgt)[0]))
        tgt = self.norm2(tgt + self.dropout(self.cross_attn(tgt + pos, memory + pos, value=memory)[0]))
        tgt = self.norm3(tgt + self.dropout(self.linear2(F.relu(self.linear1(tgt)))))
        return tgt


class TransFusion(nn.Module):
    def __init__(self, hidden_dim=256, num_layers=4, num_query=1296):
        super(TransFusion, self).__init__()
        self.layers = nn.ModuleList([copy.deepcopy(TransLayer(hidden_dim)) for _ in range(num_layers)])
        self.position_embedding = build_position_encoding(hidden_dim)
        self.query_embed = nn.Embedding(num_query, hidden_dim)

    def forward(self, feat):
        bs, c, h, w = feat.shape
        mask = torch.ones(bs, h, w, dtype=torch.bool, device=feat.device)
        pos = self.position_embedding(mask).flatten(2).permute(2, 0, 1)
        memory = feat.flatten(2).permute(2, 0, 1)
        tgt = self.query_embed.weight.unsqueeze(1).repeat(1, bs, 1)
        for layer in self.layers:
            tgt = layer(tgt, memory, pos)
        return tgt.permute(1, 2, 0).reshape(bs, c, h, w)


class FlowHead(nn.Module):
    def __init__(self, input_dim=256, hidden_dim=256):
        super(FlowHead, self).__init__()
        self.conv1 = nn.Conv2d(input_dim, hidden_dim, 3, padding=1)
        self.conv2 = nn.Conv2d(hidden_dim, 2, 3, padding=1)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.conv2(self.relu(self.conv1(x)))


def coords_grid(batch, ht, wd, device=None):
    ys, xs = torch.meshgrid(torch.arange(ht, device=device), torch.arange(wd, device=device))
    coords = torch.stack([xs, ys], dim=0).float()
    return coords[None].repeat(batch, 1, 1, 1)


class DocGeoNet(nn.Module):
    def __init__(self, hidden_dim=256, num_layers=4):
        super(DocGeoNet, self).__init__()
        self.hidden_dim = hidden_dim
        self.fnet = BasicEncoder(output_dim=hidden_dim, norm_fn='instance')

        # geometric representation branches
        self.d3_enc = nn.Sequential(ResidualBlock(hidden_dim, hidden_dim, 'instance'),
                                    ResidualBlock(hidden_dim, hidden_dim, 'instance'))
        self.tl_enc = nn.Sequential(ResidualBlock(hidden_dim, hidden_dim, 'instance'),
                                    ResidualBlock(hidden_dim, hidden_dim, 'instance'))
        self.d3_head = SegHead(hidden_dim, 3)
        self.tl_head = SegHead(hidden_dim, 1)

        self.fuse = nn.Sequential(
            nn.Conv2d(hidden_dim * 3, hidden_dim, 1),
            nn.InstanceNorm2d(hidden_dim),
            nn.ReLU(inplace=True),
        )
        self.trans = TransFusion(hidden_dim, num_layers)
        self.flow_head = FlowHead(hidden_dim, hidden_dim)
        self.mask = nn.Sequential(
            nn.Conv2d(hidden_dim, 256, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(256, 64 * 9, 1, padding=0))

    def upsample_flow(self, flow, mask):
        N, _, H, W = flow.shape
        mask = mask.view(N, 1, 9, 8, 8, H, W)
        mask = torch.softmax(mask, dim=2)
        up_flow = F.unfold(8 * flow, [3, 3], padding=1)
        up_flow = up_flow.view(N, 2, 9, 1, 1, H, W)
        up_flow = torch.sum(mask * up_flow, dim=2)
        up_flow = up_flow.permute(0, 1, 4, 2, 5, 3)
        return up_flow.reshape(N, 2, 8 * H, 8 * W)

    def forward(self, image, return_aux=False):
        N, _, H, W = image.shape
        fmap = torch.relu(self.fnet(image))

        f3d = self.d3_enc(fmap)
        ftl = self.tl_enc(fmap)
        feat = self.fuse(torch.cat([fmap, f3d, ftl], dim=1))
        feat = self.trans(feat)

        coords0 = coords_grid(N, H // 8, W // 8, device=image.device)
        coords1 = coords0 + self.flow_head(feat)
        mask = .25 * self.mask(feat)
        flow_up = self.upsample_flow(coords1 - coords0, mask)
        bm = coords_grid(N, H, W, device=image.device) + flow_up

        aux = None
        if return_aux or self.training:
            aux = (self.d3_head(f3d, (H, W)), torch.sigmoid(self.tl_head(ftl, (H, W))))
        return bm, aux
