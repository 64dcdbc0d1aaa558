# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

""" H3DNet: 3D object detection using hybrid geometric primitives.

Four backbones (one per primitive type plus the box-center branch) share the
same PointNet++ design.  Votes are generated for box centers, face centers (z and
xy faces) and edge centers; proposals are then refined by matching the
primitives predicted around every proposal.
"""

import torch
import torch.nn as nn
import numpy as np
import sys
import os
BASE_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT_DIR = os.path.dirname(BASE_DIR)
sys.path.append(BASE_DIR)
from backbone_module import Pointnet2Backbone
from voting_module import VotingModule
from proposal_module_refine import ProposalModuleRefine
from proposal_module_surface import PrimitiveModule
from dump_helper import dump_results
from loss_helper import get_loss


def _corner_offsets():
    """ Unit-cube face-center directions (6 faces) in the proposal's canonical frame. """
    return np.array([[0, 0, 1], [0, 0, -1],
                     [1, 0, 0], [-1, 0, 0],
                     [0, 1, 0], [0, -1, 0]], dtype=np.float32)


class HDNet(nn.Module):
    r"""
        Hybrid-primitive detection network.

        Parameters
        ----------
        num_class: int
        num_heading_bin: int
        num_size_cluster: int
        mean_size_arr: np.ndarray (num_size_cluster, 3)
        input_feature_dim: int (default: 0)
        num_proposal: int (default: 256)
        vote_factor: int (default: 1)
        sampling: str (default: 'vote_fps')
        use_plane: bool, predict plane primitives as well (SUN RGB-D)
    """

    def __init__(self, num_class, num_heading_bin, num_size_cluster, mean_size_arr,
        input_feature_dim=0, num_proposal=256, vote_factor=1, sampling='vote_fps', use_plane=False):
        super().__init__()

        self.num_class = num_class
        self.num_heading_bin = num_heading_bin
        self.num_size_cluster = num_size_cluster
        self.mean_size_arr = mean_size_arr
        assert(mean_size_arr.shape[0] == self.num_size_cluster)
        self.input_feature_dim = input_feature_dim
        self.num_proposal = num_proposal
        self.vote_factor = vote_factor
        self.sampling = sampling
        self.use_plane = use_plane

        # One backbone per primitive branch
        self.backbone_net1 = Pointnet2Backbone(input_feature_dim=self.input_feature_dim)
        self.backbone_net2 = Pointnet2Backbone(input_feature_dim=self.input_feature_dim)
        self.backbone_net3 = Pointnet2Backbone(input_feature_dim=self.input_feature_dim)
        self.backbone_net4 = Pointnet2Backbone(input_feature_dim=self.input_feature_dim)

        # Fuse features of the four backbones
        self.conv_agg1 = torch.nn.Conv1d(256*4, 256*2, 1)
        self.bn_agg1 = torch.nn.BatchNorm1d(256*2)
        self.conv_agg2 = torch.nn.Conv1d(256*2, 256, 1)
        self.bn_agg2 = torch.nn.BatchNorm1d(256)

        # Hough voting modules for centers / face centers / edge centers
        self.vgen = VotingModule(self.vote_factor, 256)
        self.vgen_z = VotingModule(self.vote_factor, 256)
        self.vgen_xy = VotingModule(self.vote_factor, 256)
        self.vgen_line = VotingModule(self.vote_factor, 256)

        # Primitive classification / regression heads
        self.pnet_z = PrimitiveModule(num_class, num_heading_bin, num_size_cluster,
            mean_size_arr, num_proposal, sampling, seed_feat_dim=256, numd=2)
        self.pnet_xy = PrimitiveModule(num_class, num_heading_bin, num_size_cluster,
            mean_size_arr, num_proposal, sampling, seed_feat_dim=256, numd=1)
        self.pnet_line = PrimitiveModule(num_class, num_heading_bin, num_size_cluster,
            mean_size_arr, num_proposal, sampling, seed_feat_dim=256, numd=0)

        # Proposal generation and refinement
        self.pnet_final = ProposalModuleRefine(num_class, num_heading_bin, num_size_cluster,
            mean_size_arr, num_proposal, sampling, seed_feat_dim=256)

        self.register_buffer('face_dirs', torch.from_numpy(_corner_offsets()))

    def _vote(self, vgen, xyz, features, end_points, suffix):
        xyz, features = vgen(xyz, features)
        features_norm = torch.norm(features, p=2, dim=1)
        features = features.div(features_norm.unsqueeze(1))
        end_points['vote_xyz'+suffix] = xyz
        end_points['vote_features'+suffix] = features
        return xyz, features

    def forward(self, inputs, end_points, mode=""):
        """ Forward pass of the network

        Args:
            inputs: dict {point_clouds}, point_clouds: (B, N, 3 + input_channels)
            end_points: dict to be filled
            mode: 'opt' enables the refinement stage
        Returns:
            end_points: dict
        """
        batch_size = inputs['point_clouds'].shape[0]

        end_points = self.backbone_net1(inputs['point_clouds'], end_points)
        end_points = self.backbone_net2(inputs['point_clouds'], end_points, mode='net1')
        end_points = self.backbone_net3(inputs['point_clouds'], end_points, mode='net2')
        end_points = self.backbone_net4(inputs['point_clouds'], end_points, mode='net3')

        # --------- FEATURE FUSION ---------
        xyz = end_points['fp2_xyz']
        features1 = end_points['fp2_features']
        features2 = end_points['fp2_featuresnet1']
        features3 = end_points['fp2_featuresnet2']
        features4 = end_points['fp2_featuresnet3']
        end_points['seed_inds'] = end_points['fp2_inds']
        end_points['seed_xyz'] = xyz

        features_hd = torch.cat((features1, features2, features3, features4), dim=1)
        features_hd = torch.relu(self.bn_agg1(self.conv_agg1(features_hd)))
        features_hd = torch.relu(self.bn_agg2(self.conv_agg2(features_hd)))
        end_points['seed_features'] = features_hd

        # --------- HOUGH VOTING ---------
        for suffix in ['z', 'xy', 'line']:
            end_points['seed_inds'+suffix] = end_points['fp2_inds']
            end_points['seed_xyz'+suffix] = xyz

        xyz_z, features_z = self._vote(self.vgen_z, xyz, features2, end_points, 'z')
        xyz_xy, features_xy = self._vote(self.vgen_xy, xyz, features3, end_points, 'xy')
        xyz_line, features_line = self._vote(self.vgen_line, xyz, features4, end_points, 'line')
        xyz_c, features_c = self._vote(self.vgen, xyz, features1, end_points, '')

        # --------- PRIMITIVES ---------
        end_points = self.pnet_z(xyz_z, features_z, end_points, mode='_z')
        end_points = self.pnet_xy(xyz_xy, features_xy, end_points, mode='_xy')
        end_points = self.pnet_line(xyz_line, features_line, end_points, mode='_line')

        # --------- PROPOSAL + REFINEMENT ---------
        end_points = self.pnet_final(xyz_c, features_c, end_points, mode=mode)

        if mode == 'opt':
            # face-center query points of every proposal, used for primitive matching
            centers = end_points['center']                          # (B, K, 3)
            sizes = end_points['pred_size']                         # (B, K, 3)
            query = centers.unsqueeze(2) + 0.5 * sizes.unsqueeze(2) * self.face_dirs.view(1, 1, 6, 3)
            end_points['surface_query'] = query.view(batch_size, -1, 3)
            match_idx = torch.arange(self.num_proposal).cuda().unsqueeze(0).repeat(batch_size, 1)
            end_points['match_idx'] = match_idx

        return end_points


if __name__=='__main__':
    sys.path.append(os.path.join(ROOT_DIR, 'scannet'))
    from model_util_scannet import ScannetDatasetConfig
    DC = ScannetDatasetConfig()
    model = HDNet(DC.num_class, DC.num_heading_bin, DC.num_size_cluster, DC.mean_size_arr,
                  input_feature_dim=1).cuda()
    pc = torch.rand((2, 40000, 4)).cuda()
    end_points = model({'point_clouds': pc}, end_points={}, mode='opt')
    for key in sorted(end_points.keys()):
        if torch.is_tensor(end_points[key]):
            print(key, tuple(end_points[key].shape))
