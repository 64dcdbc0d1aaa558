import math
from functools import partial

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from mmcv.cnn import build_norm_layer
from mmcv.runner import BaseModule
from mmdet3d.models.builder import MIDDLE_ENCODERS, VOXEL_ENCODERS
import spconv.pytorch as spconv


def post_act_block(in_channels, out_channels, kernel_size, indice_key=None, stride=1, padding=0,
                   conv_type='subm', norm_cfg=None):

    if conv_type == 'subm':
        conv = spconv.SubMConv3d(in_channels, out_channels, kernel_size, bias=False, indice_key=indice_key)
    elif conv_type == 'spconv':
        conv = spconv.SparseConv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                   bias=False, indice_key=indice_key)
    elif conv_type == 'inverseconv':
        conv = spconv.SparseInverseConv3d(in_channels, out_channels, kernel_size, indice_key=indice_key, bias=False)
    else:
        raise NotImplementedError

    m = spconv.SparseSequential(
        conv,
        build_norm_layer(norm_cfg, out_channels)[1],
        nn.ReLU(inplace=True),
    )

    return m


class SparseBasicBlock(spconv.SparseModule):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, norm_cfg=None, downsample=None, indice_key=None):
        super(SparseBasicBlock, self).__init__()

        self.net = spconv.SparseSequential(
            spconv.SubMConv3d(inplanes, planes, 3, stride=stride, padding=1, bias=False, indice_key=indice_key),
            build_norm_layer(norm_cfg, planes)[1],
            nn.ReLU(inplace=True),
            spconv.SubMConv3d(planes, planes, 3, stride=stride, padding=1, bias=False, indice_key=indice_key),
            build_norm_layer(norm_cfg, planes)[1],
        )

        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.net(x)
        out = out.replace_feature(out.features + identity.features)
        out = out.replace_feature(self.relu(out.features))

        return out


@VOXEL_ENCODERS.register_module()
class DynamicMeanVFE(BaseModule):
    """Average the points that fall into the same voxel (hard-voxel-free).

    Replaces mmdet3d's DynamicSimpleVFE, which needs the CUDA
    dynamic_scatter op from mmcv.
    """

    def __init__(self, num_features=5, voxel_size=(0.1, 0.1, 0.1),
                 point_cloud_range=(-51.2, -51.2, -5.0, 51.2, 51.2, 3.0), init_cfg=None):
        super().__init__(init_cfg)
        self.num_features = num_features
        self.register_buffer('voxel_size', torch.tensor(voxel_size), persistent=False)
        self.register_buffer('pc_min', torch.tensor(point_cloud_range[:3]), persistent=False)

    @torch.no_grad()
    def forward(self, points, coors):
        # coors: (N, 4) [batch, z, y, x]; one row per point
        unq_coors, unq_inv = torch.unique(coors, return_inverse=True, dim=0)
        voxel_feats = points.new_zeros((unq_coors.shape[0], points.shape[1]))
        voxel_feats.scatter_reduce_(0, unq_inv[:, None].expand(-1, points.shape[1]), points,
                                    reduce='mean', include_self=False)
        return voxel_feats, unq_coors


@MIDDLE_ENCODERS.register_module()
class SparseLiDAREnc4x(nn.Module):
    def __init__(self, input_channel, norm_cfg, base_channel, out_channel,
                 sparse_shape_xyz, **kwargs):
        super().__init__()

        block = post_act_block
        self.sparse_shape_xyz = sparse_shape_xyz

        self.conv_input = spconv.SparseSequential(
            spconv.SubMConv3d(input_channel, base_channel, 3),
            nn.GroupNorm(16, base_channel),
            nn.ReLU(inplace=True))

        self.conv1 = spconv.SparseSequential(
            SparseBasicBlock(base_channel, base_channel, norm_cfg=norm_cfg, indice_key='res1'),
            SparseBasicBlock(base_channel, base_channel, norm_cfg=norm_cfg, indice_key='res1'),
        )

        self.conv2 = spconv.SparseSequential(
            block(base_channel, base_channel * 2, 3, norm_cfg=norm_cfg, stride=2, padding=1, indice_key='spconv2', conv_type='spconv'),
            SparseBasicBlock(base_channel * 2, base_channel * 2, norm_cfg=norm_cfg, indice_key='res2'),
            SparseBasicBlock(base_channel * 2, base_channel * 2, norm_cfg=norm_cfg, indice_key='res2'),
        )

        self.conv3 = spconv.SparseSequential(
            block(base_channel * 2, base_channel * 4, 3, norm_cfg=norm_cfg, stride=2, padding=1, indice_key='spconv3', conv_type='spconv'),
            SparseBasicBlock(base_channel * 4, base_channel * 4, norm_cfg=norm_cfg, indice_key='res3'),
            SparseBasicBlock(base_channel * 4, base_channel * 4, norm_cfg=norm_cfg, indice_key='res3'),
        )

        self.conv_out = nn.Sequential(
            nn.Conv3d(base_channel * 4, out_channel, 3, padding=1, bias=False),
            nn.GroupNorm(16, out_channel),
            nn.ReLU(inplace=True),
        )

    def forward(self, voxel_features, coors, batch_size):
        # spconv encoding
        coors = coors.int()
        # FIXME bs=1 hardcode
        input_sp_tensor = spconv.SparseConvTensor(voxel_features, coors, np.array(self.sparse_shape_xyz[::-1]), batch_size)
        x = self.conv_input(input_sp_tensor)

        x = self.conv1(x)
        x = self.conv2(x)
        x = self.conv3(x)

        x = self.conv_out(x.dense().permute(0, 1, 4, 3, 2))  # B, C, W, H, D
        return {'x': x.permute(0, 1, 4, 3, 2).contiguous(),
                'pts_feats': [x]}
