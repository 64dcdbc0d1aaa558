import math
import random

import cv2
import numpy as np
import torch
import torch.nn.functional as F

from mmdet.models.builder import build_backbone, build_head, build_neck, build_loss
from mmdet.models.losses import CondLaneLoss
from .single_stage import SingleStageDetector
from ..builder import DETECTORS


@DETECTORS.register_module
class CondLanenet(SingleStageDetector):

    def __init__(self,
                 backbone,
                 neck=None,
                 head=None,
                 train_cfg=None,
                 test_cfg=None,
                 pretrained=None,
                 loss_weights=None,
                 num_classes=1):
        super(SingleStageDetector, self).__init__()
        self.backbone = build_backbone(backbone)
        self.neck = build_neck(neck)
        self.head = build_head(head)
        self.train_cfg = train_cfg
        self.test_cfg = test_cfg
        self.num_classes = num_classes
        self.loss = CondLaneLoss(loss_weights, num_classes)
        self.init_weights(pretrained=pretrained)

    def parse_gt(self, gts, device):
        reg = (torch.from_numpy(gts['reg']).float()).unsqueeze(0).to(device)
        reg_mask = (torch.from_numpy(gts['reg_mask']).float()).unsqueeze(0).to(device)
        row = (torch.from_numpy(gts['row']).float()).unsqueeze(0).unsqueeze(0).to(device)
        row_mask = (torch.from_numpy(gts['row_mask']).float()).unsqueeze(0).unsqueeze(0).to(device)
        if 'range' in gts:
            lane_range = torch.from_numpy(gts['range']).to(device)
        else:
            mask = (torch.from_numpy(gts['row_mask']).float()).unsqueeze(0)
            lane_range = torch.zeros((1, mask.shape[-2]), dtype=torch.int64).to(device)
        return reg, reg_mask, row, row_mask, lane_range

    def parse_pos(self, gt_masks, hm_shape, device, mask_shape=None):
        b = len(gt_masks)
        n = self.num_classes
        hm_h, hm_w = hm_shape[:2]
        if mask_shape is None:
            mask_h, mask_w = hm_shape[:2]
        else:
            mask_h, mask_w = mask_shape[:2]
        poses = []
        regs = []
        reg_masks = []
        rows = []
        row_masks = []
        lane_ranges = []
        labels = []
        num_ins = []
        for idx, m_img in enumerate(gt_masks):
            num = 0
            for m in m_img:
                gts = self.parse_gt(m, device=device)
                reg, reg_mask, row, row_mask, lane_range = gts
                label = m['label']
                num += len(m['points'])
                for p in m['points']:
                    pos = idx * n * hm_h * hm_w + label * hm_h * hm_w + p[1] * hm_w + p[0]
                    poses.append(pos)
                for i in range(len(m['points'])):
                    labels.append(label)
                    regs.append(reg)
                    reg_masks.append(reg_mask)
                    rows.append(row)
                    row_masks.append(row_mask)
                    lane_ranges.append(lane_range)
            if num == 0:
                reg = torch.zeros((1, 1, mask_h, mask_w)).to(device)
                reg_mask = torch.zeros((1, 1, mask_h, mask_w)).to(device)
                row = torch.zeros((1, 1, mask_h)).to(device)
                row_mask = torch.zeros((1, 1, mask_h)).to(device)
                lane_range = torch.zeros((1, mask_h), dtype=torch.int64).to(device)
                label = 0
                pos = idx * n * hm_h * hm_w + random.randint(0, n * hm_h * hm_w - 1)
                num = 1
                labels.append(label)
                poses.append(pos)
                regs.append(reg)
                reg_masks.append(reg_mask)
                rows.append(row)
                row_masks.append(row_mask)
                lane_ranges.append(lane_range)

            num_ins.append(num)
        if len(regs) > 0:
            regs = torch.cat(regs, 1)
            reg_masks = torch.cat(reg_masks, 1)
            rows = torch.cat(rows, 1)
            row_masks = torch.cat(row_masks, 1)
            lane_ranges = torch.cat(lane_ranges, 0)

        gts = dict(
            gt_reg=regs,
            gt_reg_mask=reg_masks,
            gt_rows=rows,
            gt_row_masks=row_masks,
            gt_ranges=lane_ranges)

        return poses, labels, num_ins, gts

    def forward(self, img, img_metas=None, return_loss=True, **kwargs):
        """
        Calls either forward_train or forward_test depending on whether
        return_loss=True. Note this setting will change the expected inputs.
        When `return_loss=True`, img and img_meta are single-nested (i.e.
        Tensor and List[dict]), and when `resturn_loss=False`, img and img_meta
        should be double nested (i.e.  List[Tensor], List[List[dict]]), with
        the outer list indicating test time augmentations.
        """
        if img_metas is None:
            return self.test_inference(img)
        elif return_loss:
            return self.forward_train(img, img_metas, **kwargs)
        else:
            return self.forward_test(img, img_metas, **kwargs)

    def forward_train(self, img, img_metas, **kwargs):
        gt_batch_masks = [m['gt_masks'] for m in img_metas]
        hm_shape = img_metas[0]['hm_shape']
        mask_shape = img_metas[0]['mask_shape']
        poses, labels, num_ins, gts = self.parse_pos(
            gt_batch_masks, hm_shape, img.device, mask_shape=mask_shape)
        kwargs.update(gts)

        output = self.backbone(img.type(torch.cuda.FloatTensor))
        output, memory = self.neck(output)
        if self.head:
            outputs = self.head.forward_train(output, poses, num_ins)
        losses = self.loss(outputs, img_metas, **kwargs)
        return losses

    def test_inference(self, img, hack_seeds=None, **kwargs):
        """Used for speed testing / ONNX export, no post-processing."""
        output = self.backbone(img)
        output, memory = self.neck(output)
        if self.head:
            seeds, hm = self.head.forward_test(output, hack_seeds, kwargs.get('thr', 0.5))
        return [seeds, hm]

    def forward_test(self,
                     img,
                     img_metas,
                     benchmark=False,
                     hack_seeds=None,
                     **kwargs):
        """Test without augmentation."""
        feats = self.backbone(img.type(torch.cuda.FloatTensor))
        output, memory = self.neck(feats)
        if self.head:
            seeds, hm = self.head.forward_test(output, hack_seeds, kwargs['thr'])

        return [seeds, hm]

    def forward_dummy(self, img):
        x = self.backbone(img)
        x = self.neck(x)
        return x
