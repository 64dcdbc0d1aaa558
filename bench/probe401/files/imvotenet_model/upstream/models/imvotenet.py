# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

""" ImVoteNet: boosting 3D object detection in point clouds with image votes.

Three towers share the point cloud backbone:
  img_only  -- seed features replaced by lifted image features
  pc_only   -- the original VoteNet tower
  pc_img    -- concatenation of both (the one used at test time)
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
from proposal_module import ProposalModule
from dump_helper import dump_results
from loss_helper import get_loss


def sample_valid_seeds(mask, num_sampled_seed=1024):
    """ Randomly pick num_sampled_seed indices among the valid (mask==1) seeds of every sample.

    Args:
        mask: (B, N) 0/1 tensor
    Returns:
        sample_inds: (B, num_sampled_seed) long tensor
    """
    mask = mask.cpu().detach().numpy()  # B,N
    all_inds = np.arange(mask.shape[1])  # N,
    batch_size = mask.shape[0]
    sample_inds = np.zeros((batch_size, num_sampled_seed))
    for bidx in range(batch_size):
        # return index of non zero elements
        valid_inds = np.nonzero(mask[bidx, :])[0]
        if len(valid_inds) < num_sampled_seed:
            assert(num_sampled_seed <= 1024)
            rand_inds = np.random.choice(list(set(np.arange(1024))-set(np.mod(valid_inds, 1024))),
                                         num_sampled_seed-len(valid_inds),
                                         replace=False)
            cur_sample_inds = np.concatenate((valid_inds, rand_inds))
        else:
            cur_sample_inds = np.random.choice(valid_inds, num_sampled_seed, replace=False)
        sample_inds[bidx, :] = cur_sample_inds
    sample_inds = torch.from_numpy(sample_inds).long()
    return sample_inds


class ImageFeatureModule(nn.Module):
    """ Lift 2D image votes to 3D pseudo-votes for every seed point. """

    def __init__(self, max_imvote_per_pixel=3):
        super().__init__()
        self.max_imvote_per_pixel = max_imvote_per_pixel
        self.vote_dims = 1 + self.max_imvote_per_pixel * 4

    def forward(self, end_points):
        xyz = end_points['seed_xyz']  # (B, num_seed, 3)
        seed_num = xyz.shape[1]
        batch_size = xyz.shape[0]

        # project seeds to the image plane: upright-depth -> camera -> pixels
        calib_Rtilt = end_points['calib_Rtilt']
        calib_K = end_points['calib_K']
        xyz2 = torch.matmul(calib_Rtilt.transpose(2, 1), (1 / end_points['scale'] ** 2).unsqueeze(-1).unsqueeze(-1) * xyz.transpose(2, 1))
        xyz2 = xyz2.transpose(2, 1)
        xyz2[:, :, [0, 1, 2]] = xyz2[:, :, [0, 2, 1]]
        xyz2[:, :, 1] *= -1
        uv = torch.matmul(xyz2, calib_K.transpose(2, 1))
        uv[:, :, 0] /= uv[:, :, 2]
        uv[:, :, 1] /= uv[:, :, 2]
        u = (uv[:, :, 0] - 1).round()
        v = (uv[:, :, 1] - 1).round()

        # gather the image votes of the pixel each seed falls in
        full_img_votes_1d = end_points['full_img_votes_1d']  # (B, H*W*vote_dims)
        full_img_width = end_points['full_img_width']
        idx_beg = v * full_img_width.unsqueeze(-1) + u
        seed_gt_votes_idx = (idx_beg.unsqueeze(-1) * self.vote_dims).long()
        offsets = torch.arange(self.vote_dims).cuda().long().view(1, 1, -1)
        seed_gt_votes_idx = seed_gt_votes_idx + offsets
        img_votes = torch.gather(full_img_votes_1d, 1, seed_gt_votes_idx.view(batch_size, -1))
        img_votes = img_votes.view(batch_size, seed_num, self.vote_dims).float()

        # pseudo 3D votes: move along the ray so that the projected vote matches
        num_votes = img_votes[:, :, 0].long()
        vote_uv = img_votes[:, :, 1:].view(batch_size, seed_num, self.max_imvote_per_pixel, 4)
        ray_dir = torch.cuda.FloatTensor(batch_size, seed_num, self.max_imvote_per_pixel, 3).zero_()
        ray_dir[..., 0] = vote_uv[..., 0] / (calib_K[:, 0, 0].view(-1, 1, 1) + 1e-6)
        ray_dir[..., 1] = vote_uv[..., 1] / (calib_K[:, 1, 1].view(-1, 1, 1) + 1e-6)
        ray_dir[..., 2] = 1.0
        depth = xyz2[:, :, 2:3].unsqueeze(2)
        pseudo_vote = ray_dir * depth
        vote_mask = (torch.arange(self.max_imvote_per_pixel, device=num_votes.device).view(1, 1, -1)
                     < num_votes.unsqueeze(-1)).float()
        pseudo_vote = pseudo_vote * vote_mask.unsqueeze(-1)

        # semantic cue: 2D detector class scores of the box containing the pixel
        cls_score_feats = end_points['cls_score_feats']  # (B, num_seed, num_class)
        texture = end_points['full_img_1d']
        tex_idx = (idx_beg.long() * 3).unsqueeze(-1) + torch.arange(3, device=idx_beg.device).view(1, 1, -1)
        tex_feats = torch.gather(texture, 1, tex_idx.view(batch_size, -1)).view(batch_size, seed_num, 3) / 255.0

        img_features = torch.cat([pseudo_vote.view(batch_size, seed_num, -1),
                                  vote_mask, cls_score_feats, tex_feats], dim=-1)
        return img_features.transpose(2, 1).contiguous()  # (B, C_img, num_seed)


class ImVoteNet(nn.Module):
    r"""
        ImVoteNet: VoteNet boosted with lifted 2D image votes.

        Parameters are those of VoteNet plus:
        max_imvote_per_pixel: int (default: 3)
        image_feature_dim: int, channels of the lifted image features
        image_hidden_dim: int (default: 256)
    """

    def __init__(self, num_class, num_heading_bin, num_size_cluster, mean_size_arr,
                 input_feature_dim=0, num_proposal=128, vote_factor=1, sampling='vote_fps',
                 max_imvote_per_pixel=3, image_feature_dim=18, image_hidden_dim=256):
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
        self.max_imvote_per_pixel = max_imvote_per_pixel
        self.image_feature_dim = image_feature_dim

        self.backbone_net = Pointnet2Backbone(input_feature_dim=self.input_feature_dim)
        self.image_feature_extractor = ImageFeatureModule(max_imvote_per_pixel=self.max_imvote_per_pixel)
        self.image_mlp = nn.Sequential(
            nn.Conv1d(image_feature_dim, image_hidden_dim, 1),
            nn.BatchNorm1d(image_hidden_dim),
            nn.ReLU(inplace=True),
            nn.Conv1d(image_hidden_dim, image_hidden_dim, 1),
            nn.BatchNorm1d(image_hidden_dim),
            nn.ReLU(inplace=True))

        self.img_only_vgen = VotingModule(self.vote_factor, image_hidden_dim)
        self.pc_only_vgen = VotingModule(self.vote_factor, 256)
        self.pc_img_vgen = VotingModule(self.vote_factor, 256 + image_hidden_dim)

        self.img_only_pnet = ProposalModule(num_class, num_heading_bin, num_size_cluster,
            mean_size_arr, num_proposal, sampling, seed_feat_dim=image_hidden_dim, key_prefix='img_only_')
        self.pc_only_pnet = ProposalModule(num_class, num_heading_bin, num_size_cluster,
            mean_size_arr, num_proposal, sampling, seed_feat_dim=256, key_prefix='pc_only_')
        self.pc_img_pnet = ProposalModule(num_class, num_heading_bin, num_size_cluster,
            mean_size_arr, num_proposal, sampling, seed_feat_dim=256 + image_hidden_dim, key_prefix='pc_img_')

    def _tower(self, vgen, pnet, xyz, features, end_points, prefix):
        vote_xyz, vote_features = vgen(xyz, features)
        vote_features = vote_features.div(torch.norm(vote_features, p=2, dim=1).unsqueeze(1))
        end_points[prefix + 'vote_xyz'] = vote_xyz
        end_points[prefix + 'vote_features'] = vote_features
        return pnet(vote_xyz, vote_features, end_points)

    def forward(self, inputs, joint_only=False):
        end_points = {}
        end_points.update(inputs)
        end_points = self.backbone_net(inputs['point_clouds'], end_points)

        xyz = end_points['fp2_xyz']
        features = end_points['fp2_features']
        end_points['seed_inds'] = end_points['fp2_inds']
        end_points['seed_xyz'] = xyz
        end_points['seed_features'] = features

        img_features = self.image_feature_extractor(end_points)
        img_features = self.image_mlp(img_features)
        joint_features = torch.cat((features, img_features), 1)

        if not joint_only:
            end_points = self._tower(self.img_only_vgen, self.img_only_pnet, xyz, img_features, end_points, 'img_only_')
            end_points = self._tower(self.pc_only_vgen, self.pc_only_pnet, xyz, features, end_points, 'pc_only_')
        end_points = self._tower(self.pc_img_vgen, self.pc_img_pnet, xyz, joint_features, end_points, 'pc_img_')

        return end_points
