import torch
import numpy as np

from det_oprs.bbox_opr import box_overlap_opr, bbox_transform_opr
from config import config


def fpn_rpn_reshape(pred_cls_score_list, pred_bbox_offsets_list):
    final_pred_bbox_offsets_list = []
    final_pred_cls_score_list = []
    for bid in range(config.train_batch_per_gpu):
        batch_pred_bbox_offsets_list = []
        batch_pred_cls_score_list = []
        for i in range(len(pred_cls_score_list)):
            pred_cls_score_perlvl = pred_cls_score_list[i][bid] \
                .permute(1, 2, 0).reshape(-1, 2)
            pred_bbox_offsets_perlvl = pred_bbox_offsets_list[i][bid] \
                .permute(1, 2, 0).reshape(-1, 4)
            batch_pred_cls_score_list.append(pred_cls_score_perlvl)
            batch_pred_bbox_offsets_list.append(pred_bbox_offsets_perlvl)
        batch_pred_cls_score = torch.cat(batch_pred_cls_score_list, dim=0)
        batch_pred_bbox_offsets = torch.cat(batch_pred_bbox_offsets_list, dim=0)
        final_pred_cls_score_list.append(batch_pred_cls_score)
        final_pred_bbox_offsets_list.append(batch_pred_bbox_offsets)
    final_pred_cls_score = torch.cat(final_pred_cls_score_list, dim=0)
    final_pred_bbox_offsets = torch.cat(final_pred_bbox_offsets_list, dim=0)
    return final_pred_cls_score, final_pred_bbox_offsets


def fpn_anchor_target_opr_core_impl(
        gt_boxes, im_info, anchors, allow_low_quality_matches=True):
    ignore_label = config.ignore_label
    # get the gt boxes
    valid_gt_boxes = gt_boxes[:int(im_info[5]), :]
    valid_gt_boxes = valid_gt_boxes[valid_gt_boxes[:, -1].gt(0)]
    # compute the iou matrix
    anchors = anchors.type_as(valid_gt_boxes)
    overlaps = box_overlap_opr(anchors, valid_gt_boxes[:, :4])
    # match the dtboxes
    max_overlaps, argmax_overlaps = torch.max(overlaps, axis=1)
    # _, gt_argmax_overlaps = torch.max(overlaps, axis=0)
    gt_argmax_overlaps = my_gt_argmax(overlaps)
    del overlaps
    # all ignore
    labels = torch.ones(anchors.shape[0], device=gt_boxes.device, dtype=torch.long) * ignore_label
    # set negative ones
    labels = labels * (max_overlaps >= config.rpn_negative_overlap)
    # set positive ones
    fg_mask = (max_overlaps >= config.rpn_positive_overlap)
    if allow_low_quality_matches:
        gt_id = torch.arange(valid_gt_boxes.shape[0]).type_as(argmax_overlaps)
        argmax_overlaps[gt_argmax_overlaps] = gt_id
        max_overlaps[gt_argmax_overlaps] = 1
        fg_mask = (max_overlaps >= config.rpn_positive_overlap)
    # set positive ones
    fg_mask_ind = torch.nonzero(fg_mask, as_tuple=False).flatten()
    labels[fg_mask_ind] = 1
    # bbox targets
    bbox_targets = bbox_transform_opr(
        anchors, valid_gt_boxes[argmax_overlaps, :4])
    if config.rpn_bbox_normalize_targets:
        std_opr = torch.tensor(config.bbox_normalize_stds[None, :]
            ).type_as(bbox_targets)
        mean_opr = torch.tensor(config.bbox_normalize_means[None, :]
            ).type_as(bbox_targets)
        minus_opr = mean_opr / std_opr
        bbox_targets = bbox_targets / std_opr - minus_opr
    return labels, bbox_targets


def my_gt_argmax(overlaps):
    gt_max_overlaps, _ = torch.max(overlaps, axis=0)
    gt_max_mask = overlaps == gt_max_overlaps
    gt_argmax_overlaps = []
    for i in range(overlaps.shape[-1]):
        gt_max_inds = torch.nonzero(gt_max_mask[:, i], as_tuple=False).flatten()
        gt_max_ind = gt_max_inds[torch.randperm(gt_max_inds.numel(), device=gt_max_inds.device)[0, None]]
        gt_argmax_overlaps.append(gt_max_ind)
    gt_argmax_overlaps = torch.cat(gt_argmax_overlaps)
    return gt_argmax_overlaps


def subsample_labels(labels, num_samples, positive_fraction):
    positive = torch.nonzero((labels != config.ignore_label) & (labels != 0), as_tuple=False).squeeze(1)
    negative = torch.nonzero(labels == 0, as_tuple=False).squeeze(1)

    num_pos = int(num_samples * positive_fraction)
    num_pos = min(positive.numel(), num_pos)
    num_neg = num_samples - num_pos
    num_neg = min(negative.numel(), num_neg)

    # randomly select positive and negative examples
    perm1 = torch.randperm(positive.numel()).cuda()[:num_pos]
    perm2 = torch.randperm(negative.numel(), device=negative.device)[:num_neg]

    pos_idx = positive[perm1]
    neg_idx = negative[perm2]
    labels.fill_(config.ignore_label)
    labels.scatter_(0, pos_idx, 1)
    labels.scatter_(0, neg_idx, 0)
    return labels


@torch.no_grad()
def fpn_anchor_target(boxes, im_info, all_anchors_list):
    final_labels_list = []
    final_bbox_targets_list = []
    for bid in range(config.train_batch_per_gpu):
        batch_labels_list = []
        batch_bbox_targets_list = []
        for i in range(len(all_anchors_list)):
            anchors_perlvl = all_anchors_list[i]
            rpn_labels_perlvl, rpn_bbox_targets_perlvl = fpn_anchor_target_opr_core_impl(
                boxes[bid], im_info[bid], anchors_perlvl)
            batch_labels_list.append(rpn_labels_perlvl)
            batch_bbox_targets_list.append(rpn_bbox_targets_perlvl)
        # here we samples the rpn_labels
        concated_batch_labels = torch.cat(batch_labels_list, dim=0)
        concated_batch_bbox_targets = torch.cat(batch_bbox_targets_list, dim=0)
        # sample labels
        num_positive = config.num_sample_anchors * config.positive_anchor_ratio
        concated_batch_labels = subsample_labels(concated_batch_labels,
            config.num_sample_anchors, config.positive_anchor_ratio)
        final_labels_list.append(concated_batch_labels)
        final_bbox_targets_list.append(concated_batch_bbox_targets)
    final_labels = torch.cat(final_labels_list, dim=0)
    final_bbox_targets = torch.cat(final_bbox_targets_list, dim=0)
    return final_labels, final_bbox_targets


class AnchorGenerator():
    """default anchor generator for fpn.
    This class generate anchors by feature map in level.
    """
    def __init__(self, base_size=16, ratios=[0.5, 1, 2],
        base_scale=2):
        self.base_size = base_size
        self.base_scale = np.array(base_scale)
        self.anchor_ratios = np.array(ratios)

    def _whctrs(self, anchor):
        """convert anchor box into (w, h, ctr_x, ctr_y)
        """
        w = anchor[:, 2] - anchor[:, 0] + 1
        h = anchor[:, 3] - anchor[:, 1] + 1
        x_ctr = anchor[:, 0] + 0.5 * (w - 1)
        y_ctr = anchor[:, 1] + 0.5 * (h - 1)
        return w, h, x_ctr, y_ctr

    def get_plane_anchors(self, anchor_scales: np.ndarray):
        """get anchors per location on feature map.
        The anchor number is anchor_scales x anchor_ratios
        """
        base_anchor = np.array([[0, 0, self.base_size - 1, self.base_size - 1]])
        off = self.base_size // 2 - (self.base_size - 1) / 2
        w, h, x_ctr, y_ctr = self._whctrs(base_anchor)
        # ratio enumerate
        size = w * h
        size_ratios = size / self.anchor_ratios
        ws = np.round(np.sqrt(size_ratios))
        hs = np.round(ws * self.anchor_ratios)
        # scale enumerate
        anchor_scales = anchor_scales[None, ...]
        ws = (ws[:, None] * anchor_scales).reshape(-1, 1)
        hs = (hs[:, None] * anchor_scales).reshape(-1, 1)
        # make anchors
        plane_anchors = np.hstack(
            [
                x_ctr - 0.5 * (ws - 1) - off,
                y_ctr - 0.5 * (hs - 1) - off,
                x_ctr + 0.5 * (ws - 1) - off,
                y_ctr + 0.5 * (hs - 1) - off,
            ]
        )
        return plane_anchors.astype(np.float32)

    def get_center_offsets(self, featmap, stride):
        f_device = featmap.device
        fm_height, fm_width = featmap.shape[-2], featmap.shape[-1]
        shift_x = torch.arange(0, fm_width, device=f_device) * stride
        shift_y = torch.arange(0, fm_height, device=f_device) * stride
        # make the mesh grid of shift_x and shift_y
        mesh_shape = (fm_height, fm_width)
        broad_shift_x = shift_x.reshape(-1, shift_x.shape[0]).repeat(fm_height, 1)
        broad_shift_y = shift_y.reshape(shift_y.shape[0], -1).repeat(1, fm_width)
        flatten_shift_x = broad_shift_x.flatten().reshape(-1, 1)
        flatten_shift_y = broad_shift_y.flatten().reshape(-1, 1)
        shifts = torch.cat(
            [flatten_shift_x, flatten_shift_y, flatten_shift_x, flatten_shift_y],
            axis=1)
        return shifts

    def get_anchors_by_feature(self, featmap, stride, off_stride):
        # shifts shape: [A, 4]
        shifts = self.get_center_offsets(featmap, stride)
        # plane_anchors shape: [B, 4], e.g. B=3
        plane_anchors = self.get_plane_anchors(self.base_scale * off_stride)
        plane_anchors = torch.tensor(plane_anchors, device=featmap.device)
        # all_anchors = shifts + plane_anchors
        all_anchors = shifts[:, None, :] + plane_anchors[None, :, :]
        all_anchors = all_anchors.reshape(-1, 4)
        return all_anchors

    @torch.no_grad()
    def __call__(self, featmap, base_stride, off_stride):
        return self.get_anchors_by_feature(featmap, base_stride, off_stride)
