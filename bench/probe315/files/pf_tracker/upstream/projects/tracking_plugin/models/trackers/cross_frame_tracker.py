# ------------------------------------------------------------------------
# Copyright (c) 2023 toyota research instutute.
# ------------------------------------------------------------------------
# Modified from PETR (https://github.com/megvii-research/PETR)
# Copyright (c) 2022 megvii-model. All Rights Reserved.
# ------------------------------------------------------------------------
import copy

import numpy as np
import torch
import torch.nn as nn
from mmcv.runner import auto_fp16, force_fp32
from mmdet.models import DETECTORS, build_loss
from mmdet3d.core import bbox3d2result
from mmdet3d.models.detectors.mvx_two_stage import MVXTwoStageDetector

from projects.mmdet3d_plugin.models.utils.grid_mask import GridMask
from projects.tracking_plugin.core.instances import Instances
from .runtime_tracker import RunTimeTracker
from .spatial_temporal_reason import SpatialTemporalReasoner
from ..utils import time_position_embedding, xyz_ego_transformation, normalize, denormalize


@DETECTORS.register_module()
class Cam3DTracker(MVXTwoStageDetector):
    """Camera-only 3D tracker (PF-Track): joint detection, tracking and
    forecasting with a past-and-future reasoning memory.
    """

    def __init__(self,
                 num_classes=10,
                 num_query=100,
                 tracking=False,
                 train_backbone=True,
                 if_update_ego=True,
                 motion_prediction=True,
                 motion_prediction_ref_update=True,
                 runtime_tracker=None,
                 spatial_temporal_reason=None,
                 use_grid_mask=False,
                 pc_range=None,
                 loss=None,
                 embed_dims=256,
                 **kwargs):
        super(Cam3DTracker, self).__init__(**kwargs)
        self.num_classes = num_classes
        self.num_query = num_query
        self.embed_dims = embed_dims
        self.tracking = tracking
        self.train_backbone = train_backbone
        self.if_update_ego = if_update_ego
        self.motion_prediction = motion_prediction
        self.motion_prediction_ref_update = motion_prediction_ref_update
        self.pc_range = nn.Parameter(torch.tensor(pc_range), requires_grad=False)

        self.grid_mask = GridMask(True, True, rotate=1, offset=False, ratio=0.5, mode=1, prob=0.7)
        self.use_grid_mask = use_grid_mask

        # query initialization
        self.reference_points = nn.Embedding(self.num_query, 3)
        self.query_embedding = nn.Sequential(
            nn.Linear(self.embed_dims * 3 // 2, self.embed_dims),
            nn.ReLU(),
            nn.Linear(self.embed_dims, self.embed_dims),
        )
        self.query_feat_embedding = nn.Embedding(self.num_query, self.embed_dims)
        nn.init.zeros_(self.query_feat_embedding.weight)

        # spatial-temporal reasoning
        self.STReasoner = SpatialTemporalReasoner(**spatial_temporal_reason)
        self.hist_len = self.STReasoner.hist_len
        self.fut_len = self.STReasoner.fut_len

        self.init_params_and_layers()

        # run time tracker
        self.runtime_tracker = RunTimeTracker(**runtime_tracker)

        # loss
        self.criterion = build_loss(loss)

        # memory of the previous frame during inference
        self.test_track_instances = None
        self.l2g_r_mat = None
        self.l2g_t = None
        self.timestamp = None

    def init_params_and_layers(self):
        nn.init.uniform_(self.reference_points.weight.data, 0, 1)

    def reset_memory(self):
        self.test_track_instances = None
        self.runtime_tracker.empty()
        self.l2g_r_mat, self.l2g_t, self.timestamp = None, None, None

    def generate_empty_instance(self):
        """Generate empty instance slots at the beginning of tracking"""
        track_instances = Instances((1, 1))
        device = self.reference_points.weight.device

        """Detection queries"""
        # reference points, query embeds, and query targets (features)
        reference_points = self.reference_points.weight
        query_embeds = self.query_embedding(pos2posemb3d(reference_points))
        track_instances.reference_points = reference_points.clone()
        track_instances.query_embeds = query_embeds.clone()
        if self.tracking:
            track_instances.query_feats = self.query_feat_embedding.weight.clone()
        else:
            track_instances.query_feats = torch.zeros_like(query_embeds)

        """Tracking information"""
        # id for the tracks
        track_instances.obj_idxes = torch.full(
            (len(track_instances),), -1, dtype=torch.long, device=device)
        # matched gt indexes, for loss computation
        track_instances.matched_gt_idxes = torch.full(
            (len(track_instances),), -1, dtype=torch.long, device=device)
        # life cycle management
        track_instances.disappear_time = torch.zeros(
            (len(track_instances), ), dtype=torch.long, device=device)
        track_instances.track_query_mask = torch.zeros(
            (len(track_instances), ), dtype=torch.bool, device=device)

        """Current frame information"""
        # classification scores
        track_instances.logits = torch.zeros(
            (len(track_instances), self.num_classes), dtype=torch.float, device=device)
        # bounding boxes
        track_instances.bboxes = torch.zeros(
            (len(track_instances), 10), dtype=torch.float, device=device)
        # track scores, normally the scores for the highest class
        track_instances.scores = torch.zeros(
            (len(track_instances)), dtype=torch.float, device=device)
        # motion prediction, not normalized
        track_instances.motion_predictions = torch.zeros(
            (len(track_instances), self.fut_len, 3), dtype=torch.float, device=device)

        """Cache for current frame information, loading temporary data for spatial-temporal reasoining"""
        track_instances.cache_logits = torch.zeros(
            (len(track_instances), self.num_classes), dtype=torch.float, device=device)
        track_instances.cache_bboxes = torch.zeros(
            (len(track_instances), 10), dtype=torch.float, device=device)
        track_instances.cache_scores = torch.zeros(
            (len(track_instances),), dtype=torch.float, device=device)
        track_instances.cache_reference_points = reference_points.clone()
        track_instances.cache_query_embeds = query_embeds.clone()
        track_instances.cache_query_feats = track_instances.query_feats.clone()
        track_instances.cache_motion_predictions = torch.zeros_like(track_instances.motion_predictions)

        """History Reasoning"""
        # embeddings
        track_instances.hist_embeds = torch.zeros(
            (len(track_instances), self.hist_len, self.embed_dims), dtype=torch.float32).cuda()
        # padding mask, follow MultiHeadAttention, 1 indicates padded
        track_instances.hist_padding_masks = torch.ones(
            (len(track_instances), self.hist_len), dtype=torch.bool, device=device)
        # positions
        track_instances.hist_xyz = torch.zeros(
            (len(track_instances), self.hist_len, 3), dtype=torch.float, device=device)
        # positional embeds
        track_instances.hist_position_embeds = torch.zeros(
            (len(track_instances), self.hist_len, self.embed_dims), dtype=torch.float32, device=device)
        # bboxes
        track_instances.hist_bboxes = torch.zeros(
            (len(track_instances), self.hist_len, 10), dtype=torch.float, device=device)
        # logits
        track_instances.hist_logits = torch.zeros(
            (len(track_instances), self.hist_len, self.num_classes), dtype=torch.float, device=device)
        # scores
        track_instances.hist_scores = torch.zeros(
            (len(track_instances), self.hist_len), dtype=torch.float, device=device)

        """Future Reasoning"""
        # embeddings
        track_instances.fut_embeds = torch.zeros(
            (len(track_instances), self.fut_len, self.embed_dims), dtype=torch.float32, device=device)
        # padding mask, follow MultiHeadAttention, 1 indicates padded
        track_instances.fut_padding_masks = torch.ones(
            (len(track_instances), self.fut_len), dtype=torch.bool, device=device)
        # positions
        track_instances.fut_xyz = torch.zeros(
            (len(track_instances), self.fut_len, 3), dtype=torch.float, device=device)
        # positional embeds
        track_instances.fut_position_embeds = torch.zeros(
            (len(track_instances), self.fut_len, self.embed_dims), dtype=torch.float32, device=device)
        # bboxes
        track_instances.fut_bboxes = torch.zeros(
            (len(track_instances), self.fut_len, 10), dtype=torch.float, device=device)
        # logits
        track_instances.fut_logits = torch.zeros(
            (len(track_instances), self.fut_len, self.num_classes), dtype=torch.float, device=device)
        # scores
        track_instances.fut_scores = torch.zeros(
            (len(track_instances), self.fut_len), dtype=torch.float, device=device)
        return track_instances

    def update_ego(self, track_instances, l2g_r1, l2g_t1, l2g_r2, l2g_t2):
        """Update the ego coordinates for reference points, hist_xyz, and fut_xyz of the track_instances
           Modify the centers of the bboxes at the same time
        Args:
            track_instances: objects
            l2g0: a [4x4] matrix for current frame lidar-to-global transformation
            l2g1: a [4x4] matrix for target frame lidar-to-global transformation
        Return:
            transformed track_instances (inplace)
        """
        # TODO: orientation of the bounding boxes
        """1. Current states"""
        ref_points = track_instances.reference_points.clone()
        physical_ref_points = xyz_ego_transformation(ref_points, l2g_r1, l2g_t1, l2g_r2, l2g_t2, self.pc_range,
                                                     src_normalized=True, tgt_normalized=False)
        track_instances.bboxes[..., [0, 1, 4]] = physical_ref_points.clone()
        track_instances.reference_points = normalize(physical_ref_points, self.pc_range)

        """2. History states"""
        inst_num = len(track_instances)
        hist_ref_xyz = track_instances.hist_xyz.clone().view(inst_num * self.hist_len, 3)
        physical_hist_ref = xyz_ego_transformation(hist_ref_xyz, l2g_r1, l2g_t1, l2g_r2, l2g_t2, self.pc_range,
                                                   src_normalized=True, tgt_normalized=False)
        physical_hist_ref = physical_hist_ref.reshape(inst_num, self.hist_len, 3)
        track_instances.hist_bboxes[..., [0, 1, 4]] = physical_hist_ref
        track_instances.hist_xyz = normalize(physical_hist_ref, self.pc_range)

        """3. Future states"""
        inst_num = len(track_instances)
        fut_ref_xyz = track_instances.fut_xyz.clone().view(inst_num * self.fut_len, 3)
        physical_fut_ref = xyz_ego_transformation(fut_ref_xyz, l2g_r1, l2g_t1, l2g_r2, l2g_t2, self.pc_range,
                                                  src_normalized=True, tgt_normalized=False)
        physical_fut_ref = physical_fut_ref.reshape(inst_num, self.fut_len, 3)
        track_instances.fut_bboxes[..., [0, 1, 4]] = physical_fut_ref
        track_instances.fut_xyz = normalize(physical_fut_ref, self.pc_range)

        return track_instances

    def extract_img_feat(self, img, len_queue=None):
        """Extract features of images."""
        B = img.size(0)
        if img is not None:
            if img.dim() == 6:
                img = img.flatten(1, 2)
            if img.dim() == 5 and img.size(0) == 1:
                img.squeeze_(0)
            elif img.dim() == 5 and img.size(0) > 1:
                B, N, C, H, W = img.size()
                img = img.reshape(B * N, C, H, W)
            if self.use_grid_mask:
                img = self.grid_mask(img)
            img_feats = self.img_backbone(img)
            if isinstance(img_feats, dict):
                img_feats = list(img_feats.values())
        else:
            return None
        if self.with_img_neck:
            img_feats = self.img_neck(img_feats)

        img_feats_reshaped = []
        for img_feat in img_feats:
            BN, C, H, W = img_feat.size()
            img_feats_reshaped.append(img_feat.view(B, int(BN / B), C, H, W))
        return img_feats_reshaped

    @auto_fp16(apply_to=('img'), out_fp32=True)
    def extract_feat(self, img, len_queue=None):
        img_feats = self.extract_img_feat(img, len_queue)
        return img_feats

    def forward(self, return_loss=True, **kwargs):
        if return_loss:
            return self.forward_train(**kwargs)
        else:
            return self.forward_test(**kwargs)

    def forward_train(self,
                      img_metas=None,
                      gt_bboxes_3d=None,
                      gt_labels_3d=None,
                      instance_inds=None,
                      img=None,
                      timestamp=None,
                      l2g_r_mat=None,
                      l2g_t=None,
                      **kwargs):
        """Forward a clip of frames, the first num_frame-1 frames only update
        the memory without back-propagating into the image backbone."""
        num_frame = img.size(1)
        track_instances = self.generate_empty_instance()

        # init gt instances!
        gt_instances_list = []
        for i in range(num_frame):
            gt_instances = Instances((1, 1))
            boxes = gt_bboxes_3d[0][i].tensor.to(img.device)
            # normalize gt bboxes here!
            boxes = normalize_bbox(boxes, self.pc_range)
            gt_instances.boxes = boxes
            gt_instances.labels = gt_labels_3d[0][i]
            gt_instances.obj_ids = instance_inds[0][i]
            gt_instances_list.append(gt_instances)

        self.criterion.initialize_for_single_clip(gt_instances_list)

        for frame_idx in range(num_frame):
            img_single = torch.stack([img_[frame_idx] for img_ in img], dim=0)
            img_metas_single = [copy.deepcopy(img_metas[0][frame_idx])]

            # update ego coordinates of the memory
            if frame_idx > 0 and self.if_update_ego:
                track_instances = self.update_ego(
                    track_instances, l2g_r_mat[0][frame_idx - 1], l2g_t[0][frame_idx - 1],
                    l2g_r_mat[0][frame_idx], l2g_t[0][frame_idx])

            # backbone is only trained on the last frame of the clip
            if frame_idx == num_frame - 1 and self.train_backbone:
                img_feats = self.extract_feat(img=img_single)
            else:
                with torch.no_grad():
                    img_feats = self.extract_feat(img=img_single)

            out = self.pts_bbox_head(img_feats, img_metas_single, track_instances.query_feats,
                                     track_instances.query_embeds, track_instances.reference_points)

            # loss is always computed in fp32: the focal loss overflows in fp16
            with torch.cuda.amp.autocast(enabled=False):
                self.criterion.loss_single_frame(frame_idx, gt_instances_list, out, track_instances)

            track_instances = self.frame_summarization(track_instances, out, tracking=True)
            track_instances = self.STReasoner(track_instances)
            if self.motion_prediction and self.motion_prediction_ref_update:
                track_instances = self.update_reference_points(track_instances)

        losses = self.criterion.losses_dict
        return losses

    def frame_summarization(self, track_instances, out, tracking=False):
        last_logits = out['all_cls_scores'][-1, 0]
        last_bboxes = out['all_bbox_preds'][-1, 0]
        track_instances.cache_logits = last_logits.clone()
        track_instances.cache_bboxes = last_bboxes.clone()
        track_instances.cache_scores = last_logits.sigmoid().max(dim=-1).values
        track_instances.cache_query_feats = out['query_feats'][0].clone()
        track_instances.cache_reference_points = out['reference_points'][0].clone()
        return track_instances

    def update_reference_points(self, track_instances):
        motion = track_instances.motion_predictions[:, 0, :2]
        xyz = denormalize(track_instances.reference_points, self.pc_range)
        xyz[..., :2] = xyz[..., :2] + motion
        track_instances.reference_points = normalize(xyz, self.pc_range)
        return track_instances

    def forward_test(self, img_metas, img=None, timestamp=None, l2g_r_mat=None, l2g_t=None, **kwargs):
        img_metas_single = img_metas[0]
        img_single = img[0]
        l2g_r_mat = l2g_r_mat[0][0].type(torch.float)
        l2g_t = l2g_t[0][0].type(torch.float)

        # first frame of a new scene
        if self.test_track_instances is None:
            track_instances = self.generate_empty_instance()
            # the previous scene's memory can be a few hundred MB at 1600x640
            torch.cuda.empty_cache()
        else:
            track_instances = self.test_track_instances
            if self.if_update_ego:
                track_instances = self.update_ego(track_instances, self.l2g_r_mat, self.l2g_t, l2g_r_mat, l2g_t)
            track_instances = Instances.cat([self.generate_empty_instance(), track_instances])

        img_feats = self.extract_feat(img=img_single)
        out = self.pts_bbox_head(img_feats, img_metas_single, track_instances.query_feats,
                                 track_instances.query_embeds, track_instances.reference_points)
        track_instances = self.frame_summarization(track_instances, out, tracking=True)
        track_instances = self.STReasoner(track_instances)
        track_instances = self.runtime_tracker.update_active_tracks(track_instances)

        self.test_track_instances = track_instances
        self.l2g_r_mat, self.l2g_t = l2g_r_mat, l2g_t

        bbox_list = self.pts_bbox_head.get_bboxes(
            out, img_metas_single, tracking=True)
        bbox_results = [
            bbox3d2result(bboxes, scores, labels)
            for bboxes, scores, labels in bbox_list
        ]
        for i, res in enumerate(bbox_results):
            res['track_ids'] = track_instances.obj_idxes.cpu()
        return [dict(pts_bbox=r) for r in bbox_results]


def pos2posemb3d(pos, num_pos_feats=128, temperature=10000):
    scale = 2 * np.pi
    pos = pos * scale
    dim_t = torch.arange(num_pos_feats, dtype=torch.float32, device=pos.device)
    dim_t = temperature ** (2 * (dim_t // 2) / num_pos_feats)
    pos_x = pos[..., 0, None] / dim_t
    pos_y = pos[..., 1, None] / dim_t
    pos_z = pos[..., 2, None] / dim_t
    pos_x = torch.stack((pos_x[..., 0::2].sin(), pos_x[..., 1::2].cos()), dim=-1).flatten(-2)
    pos_y = torch.stack((pos_y[..., 0::2].sin(), pos_y[..., 1::2].cos()), dim=-1).flatten(-2)
    pos_z = torch.stack((pos_z[..., 0::2].sin(), pos_z[..., 1::2].cos()), dim=-1).flatten(-2)
    posemb = torch.cat((pos_y, pos_x, pos_z), dim=-1)
    return posemb


def normalize_bbox(bboxes, pc_range):
    cx = bboxes[..., 0:1]
    cy = bboxes[..., 1:2]
    cz = bboxes[..., 2:3]
    w = bboxes[..., 3:4].log()
    l = bboxes[..., 4:5].log()
    h = bboxes[..., 5:6].log()
    rot = bboxes[..., 6:7]
    if bboxes.size(-1) > 7:
        vx = bboxes[..., 7:8]
        vy = bboxes[..., 8:9]
        normalized_bboxes = torch.cat(
            (cx, cy, w, l, cz, h, rot.sin(), rot.cos(), vx, vy), dim=-1
        )
    else:
        normalized_bboxes = torch.cat(
            (cx, cy, w, l, cz, h, rot.sin(), rot.cos()), dim=-1
        )
    return normalized_bboxes
