# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

""" Losses for the geometric primitive branches of H3DNet
(box face centers, box edge centers and box corners / planes).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np
import sys
import os
BASE_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT_DIR = os.path.dirname(BASE_DIR)
sys.path.append(os.path.join(ROOT_DIR, 'utils'))
from nn_distance import nn_distance, huber_loss

FAR_THRESHOLD = 0.6
NEAR_THRESHOLD = 0.3
GT_VOTE_FACTOR = 3
OBJECTNESS_CLS_WEIGHTS = [0.2, 0.8]
SEM_CLS_WEIGHTS = [0.4, 0.6]

def compute_primitive_vote_loss(end_points, mode=''):
    """ Vote loss for one primitive type (mode is '', 'z', 'xy' or 'line').

    Each seed point that lies on a surface/edge of a GT box has to vote for the
    center of that surface/edge.  A seed can vote for up to GT_VOTE_FACTOR centers.
    """
    batch_size = end_points['seed_xyz'+mode].shape[0]
    num_seed = end_points['seed_xyz'+mode].shape[1]
    vote_xyz = end_points['vote_xyz'+mode]
    seed_inds = end_points['seed_inds'+mode].long()

    if mode == 'line':
        seed_gt_votes_mask = torch.gather(end_points['point_line_mask'], 1, seed_inds).float()
        seed_inds_expand = seed_inds.view(batch_size, num_seed, 1).repeat(1, 1, 3)
        seed_gt_votes = torch.gather(end_points['point_line_offset'], 1, seed_inds_expand)
    elif mode == 'z' or mode == 'xy':
        seed_gt_votes_mask = torch.gather(end_points['point_boundary_mask_'+mode], 1, seed_inds).float()
        seed_inds_expand = seed_inds.view(batch_size, num_seed, 1).repeat(1, 1, 3)
        seed_gt_votes = torch.gather(end_points['point_boundary_offset_'+mode], 1, seed_inds_expand)
    else:
        seed_gt_votes_mask = torch.gather(end_points['vote_label_mask'], 1, seed_inds).float()
        seed_inds_expand = seed_inds.view(batch_size, num_seed, 1).repeat(1, 1, 3*GT_VOTE_FACTOR)
        seed_gt_votes = torch.gather(end_points['vote_label'], 1, seed_inds_expand)
    seed_gt_votes += end_points['seed_xyz'+mode].repeat(1, 1, seed_gt_votes.shape[-1] // 3)

    vote_xyz_reshape = vote_xyz.view(batch_size*num_seed, -1, 3)
    seed_gt_votes_reshape = seed_gt_votes.view(batch_size*num_seed, -1, 3)
    dist1, _, dist2, _ = nn_distance(vote_xyz_reshape, seed_gt_votes_reshape, l1=True)
    votes_dist, _ = torch.min(dist2, dim=1)
    votes_dist = votes_dist.view(batch_size, num_seed)
    vote_loss = torch.sum(votes_dist*seed_gt_votes_mask)/(torch.sum(seed_gt_votes_mask)+1e-6)
    return vote_loss

def compute_primitive_sem_loss(end_points, mode=''):
    """ Binary classification: does a seed point lie on a primitive of this type? """
    seed_inds = end_points['seed_inds'+mode].long()
    if mode == 'line':
        gt_mask = torch.gather(end_points['point_line_mask'], 1, seed_inds).long()
    else:
        gt_mask = torch.gather(end_points['point_boundary_mask_'+mode], 1, seed_inds).long()
    pred_logits = end_points['pred_flag'+mode]  # (B, 2, num_seed)
    weights = torch.cuda.FloatTensor(SEM_CLS_WEIGHTS)
    criterion = nn.CrossEntropyLoss(weight=weights, reduction='mean')
    sem_loss = criterion(pred_logits, gt_mask)
    return sem_loss

def compute_primitive_sem_feature_loss(end_points, mode=''):
    """ Semantic embedding loss: seeds voting for the same primitive share a feature. """
    pred_feature = end_points['sem_feature'+mode]  # (B, C, num_seed)
    seed_inds = end_points['seed_inds'+mode].long()
    batch_size, feat_dim, num_seed = pred_feature.shape
    if mode == 'line':
        gt_sem = torch.gather(end_points['point_line_sem'], 1, seed_inds)
        gt_mask = torch.gather(end_points['point_line_mask'], 1, seed_inds).float()
    else:
        gt_sem = torch.gather(end_points['point_boundary_sem_'+mode], 1, seed_inds)
        gt_mask = torch.gather(end_points['point_boundary_mask_'+mode], 1, seed_inds).float()
    # one-hot of GT semantic class for every seed point
    num_class = end_points['num_class']
    gt_one_hot = torch.zeros((batch_size, num_seed, num_class), device=pred_feature.device)
    gt_one_hot.scatter_(2, gt_sem.long().unsqueeze(-1), 1)
    sem_logits = end_points['sem_logits'+mode].transpose(2, 1)  # (B, num_seed, num_class)
    feat_loss = torch.sum(-gt_one_hot * F.log_softmax(sem_logits, -1), -1)
    feat_loss = torch.sum(feat_loss * gt_mask) / (torch.sum(gt_mask) + 1e-6)
    return feat_loss

def compute_matching_loss(end_points, config):
    """ Objectness of the refined proposals, given their primitive matching scores. """
    aggregated_vote_xyz = end_points['aggregated_vote_xyz']
    gt_center = end_points['center_label'][:, :, 0:3]
    B = gt_center.shape[0]
    K = aggregated_vote_xyz.shape[1]
    dist1, ind1, dist2, _ = nn_distance(aggregated_vote_xyz, gt_center)
    euclidean_dist1 = torch.sqrt(dist1+1e-6)

    objectness_label = torch.cuda.LongTensor(B, K).fill_(0)
    objectness_mask = torch.cuda.FloatTensor(B, K).fill_(0)
    objectness_label[euclidean_dist1 < NEAR_THRESHOLD] = 1
    objectness_mask[euclidean_dist1 < NEAR_THRESHOLD] = 1
    objectness_mask[euclidean_dist1 > FAR_THRESHOLD] = 1

    match_scores = end_points['match_scores']  # (B, 2, K)
    criterion = nn.CrossEntropyLoss(torch.Tensor(OBJECTNESS_CLS_WEIGHTS).to(match_scores.device), reduction='none')
    match_loss = criterion(match_scores, objectness_label)
    match_loss = torch.sum(match_loss * objectness_mask)/(torch.sum(objectness_mask)+1e-6)
    end_points['match_label'] = objectness_label
    end_points['match_mask'] = objectness_mask
    return match_loss

def get_primitive_loss(end_points, config):
    """ Sum of all primitive-branch losses; individual terms are written to end_points. """
    total = 0.0
    for mode in ['z', 'xy', 'line']:
        vote_loss = compute_primitive_vote_loss(end_points, mode)
        sem_loss = compute_primitive_sem_loss(end_points, mode)
        feat_loss = compute_primitive_sem_feature_loss(end_points, mode)
        end_points['vote_loss_'+mode] = vote_loss
        end_points['sem_loss_'+mode] = sem_loss
        end_points['feat_loss_'+mode] = feat_loss
        total = total + vote_loss + sem_loss + 0.1 * feat_loss
    match_loss = compute_matching_loss(end_points, config)
    end_points['match_loss'] = match_loss
    total = total + match_loss
    end_points['primitive_loss'] = total
    return total, end_points
