# ---------------------------------------------------------------------------
# Unified Panoptic Segmentation Network
#
# Copyright (c) 2018-2019 Uber Technologies, Inc.
#
# Licensed under the Uber Non-Commercial License (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at the root directory of this project.
#
# Written by Yuwen Xiong
# ---------------------------------------------------------------------------

import numpy as np
import torch
import torch.nn as nn

from upsnet.config.config import config
from upsnet.bbox.generate_anchors import generate_anchors
from upsnet.nms.nms import torch_nms_wrapper


def bbox_transform_inv(boxes, deltas, bbox_clip=np.log(1000. / 16.)):
    """Decodes [N, 4] deltas w.r.t. [N, 4] anchors (legacy +1 width convention)."""
    if boxes.shape[0] == 0:
        return deltas.new_zeros((0, deltas.shape[1]))

    widths = boxes[:, 2] - boxes[:, 0] + 1.0
    heights = boxes[:, 3] - boxes[:, 1] + 1.0
    ctr_x = boxes[:, 0] + 0.5 * (widths - 1.0)
    ctr_y = boxes[:, 1] + 0.5 * (heights - 1.0)

    dx = deltas[:, 0::4]
    dy = deltas[:, 1::4]
    dw = deltas[:, 2::4].clamp(max=bbox_clip)
    dh = deltas[:, 3::4].clamp(max=bbox_clip)

    pred_ctr_x = dx * widths[:, None] + ctr_x[:, None]
    pred_ctr_y = dy * heights[:, None] + ctr_y[:, None]
    pred_w = torch.exp(dw) * widths[:, None]
    pred_h = torch.exp(dh) * heights[:, None]

    pred_boxes = torch.zeros_like(deltas)
    pred_boxes[:, 0::4] = pred_ctr_x - 0.5 * (pred_w - 1.0)
    pred_boxes[:, 1::4] = pred_ctr_y - 0.5 * (pred_h - 1.0)
    pred_boxes[:, 2::4] = pred_ctr_x + 0.5 * (pred_w - 1.0)
    pred_boxes[:, 3::4] = pred_ctr_y + 0.5 * (pred_h - 1.0)
    return pred_boxes


def clip_boxes(boxes, im_shape):
    boxes[:, 0::4] = boxes[:, 0::4].clamp(min=0, max=im_shape[1] - 1)
    boxes[:, 1::4] = boxes[:, 1::4].clamp(min=0, max=im_shape[0] - 1)
    boxes[:, 2::4] = boxes[:, 2::4].clamp(min=0, max=im_shape[1] - 1)
    boxes[:, 3::4] = boxes[:, 3::4].clamp(min=0, max=im_shape[0] - 1)
    return boxes


class PyramidProposal(nn.Module):
    """Generates RoIs from the RPN outputs of every FPN level (P2-P6) and keeps the top scoring ones."""

    def __init__(self, feat_stride, scales, ratios, rpn_pre_nms_top_n, rpn_post_nms_top_n, threshold, rpn_min_size,
                 individual_proposals=False, batch_idx=0, use_softnms=False):
        super(PyramidProposal, self).__init__()
        self.feat_stride = feat_stride
        self.scales = np.array(scales)
        self.ratios = np.array(ratios)
        self.num_anchors = len(scales) * len(ratios)
        self.rpn_pre_nms_top_n = rpn_pre_nms_top_n
        self.rpn_post_nms_top_n = rpn_post_nms_top_n
        self.threshold = threshold
        self.rpn_min_size = rpn_min_size
        self.individual_proposals = individual_proposals
        self.batch_idx = batch_idx
        self.use_softnms = use_softnms
        self.nms = torch_nms_wrapper(self.threshold)
        self.anchors_cache = {}

    def _get_anchors(self, stride, height, width, device_id):
        key = (stride, height, width, device_id)
        if key in self.anchors_cache:
            return self.anchors_cache[key]
        base_anchors = generate_anchors(base_size=stride, scales=self.scales, ratios=self.ratios)
        shift_x = np.arange(0, width) * stride
        shift_y = np.arange(0, height) * stride
        shift_x, shift_y = np.meshgrid(shift_x, shift_y)
        shifts = np.vstack((shift_x.ravel(), shift_y.ravel(), shift_x.ravel(), shift_y.ravel())).transpose()
        A = base_anchors.shape[0]
        K = shifts.shape[0]
        anchors = base_anchors.reshape((1, A, 4)) + shifts.reshape((1, K, 4)).transpose((1, 0, 2))
        anchors = anchors.reshape((K * A, 4)).astype(np.float32)
        anchors = torch.from_numpy(anchors).cuda(device_id)
        self.anchors_cache[key] = anchors
        return anchors

    def forward(self, cls_prob_p2, cls_prob_p3, cls_prob_p4, cls_prob_p5, cls_prob_p6,
                bbox_pred_p2, bbox_pred_p3, bbox_pred_p4, bbox_pred_p5, bbox_pred_p6, im_info):
        with torch.no_grad():
            device_id = cls_prob_p2.get_device()
            cls_prob_dict = {
                'stride64': cls_prob_p6,
                'stride32': cls_prob_p5,
                'stride16': cls_prob_p4,
                'stride8': cls_prob_p3,
                'stride4': cls_prob_p2,
            }
            bbox_pred_dict = {
                'stride64': bbox_pred_p6,
                'stride32': bbox_pred_p5,
                'stride16': bbox_pred_p4,
                'stride8': bbox_pred_p3,
                'stride4': bbox_pred_p2,
            }
            batch_size = cls_prob_p2.shape[0]
            rois_list = []
            for b in range(batch_size):
                proposal_list = []
                score_list = []
                for s in self.feat_stride:
                    stride = int(s)
                    scores = cls_prob_dict['stride' + str(s)][b, self.num_anchors:, :, :]
                    bbox_deltas = bbox_pred_dict['stride' + str(s)][b]
                    height, width = scores.shape[-2:]

                    anchors = self._get_anchors(stride, height, width, device_id)

                    bbox_deltas = bbox_deltas.permute(1, 2, 0).reshape(-1, 4)
                    scores = scores.permute(1, 2, 0).reshape(-1)

                    if self.rpn_pre_nms_top_n > 0 and scores.shape[0] > self.rpn_pre_nms_top_n:
                        scores, order = scores.topk(self.rpn_pre_nms_top_n)
                        bbox_deltas = bbox_deltas[order]
                        level_anchors = anchors[order]
                    else:
                        level_anchors = anchors

                    proposals = bbox_transform_inv(level_anchors, bbox_deltas)
                    proposals = clip_boxes(proposals, im_info[b, :2])

                    ws = proposals[:, 2] - proposals[:, 0] + 1
                    hs = proposals[:, 3] - proposals[:, 1] + 1
                    min_size = self.rpn_min_size * im_info[b, 2]
                    keep = ((ws >= min_size) & (hs >= min_size)).nonzero().view(-1)
                    proposal_list.append(proposals[keep])
                    score_list.append(scores[keep])

                proposals = torch.cat(proposal_list, dim=0)
                scores = torch.cat(score_list, dim=0)

                keep = self.nms(proposals, scores)
                if self.rpn_post_nms_top_n > 0:
                    keep = keep[:self.rpn_post_nms_top_n]
                proposals = proposals[keep]
                scores = scores[keep]

                batch_inds = torch.cuda.FloatTensor(proposals.shape[0], 1).fill_(b)
                rois_list.append(torch.cat([batch_inds, proposals], dim=1))

            rois = torch.cat(rois_list, dim=0)
        return rois
