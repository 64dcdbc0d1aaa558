# Copyright (c) Facebook, Inc. and its affiliates. All Rights Reserved.
# VinVL / scene_graph_benchmark: adds class-agnostic "ml_nms" and a
# max-score filter used by the attribute R-CNN post-processor.
import torch

from maskrcnn_benchmark import _C

from apex import amp

# Only valid with fp32 inputs - give AMP the hint
nms = amp.float_function(_C.nms)

# multi-label nms: boxes of different labels never suppress each other
ml_nms = amp.float_function(_C.ml_nms)

# nms.__doc__ = """
# This function performs Non-maximum suppresion"""


def batched_nms(boxes, scores, labels, iou_threshold):
    """
    Class-wise NMS done with one kernel call by offsetting the boxes of each
    class so that boxes of different classes never overlap.

    Arguments:
        boxes (Tensor[N, 4]): x1, y1, x2, y2
        scores (Tensor[N])
        labels (Tensor[N]): integer class ids
        iou_threshold (float)
    Returns:
        keep (Tensor[K]): indices of the kept boxes, sorted by decreasing score
    """
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64, device=boxes.device)
    max_coordinate = boxes.max()
    offsets = labels.to(boxes) * (max_coordinate + 1)
    boxes_for_nms = boxes + offsets[:, None]
    keep = nms(boxes_for_nms, scores, iou_threshold)
    return keep


def max_score_filter(boxes, scores, score_thresh, max_detections):
    """
    'NMS_FILTER == 2' in the VinVL configs: keep, for every box, only its best
    class and drop everything below score_thresh.
    """
    max_scores, labels = scores.max(dim=1)
    keep = torch.nonzero(max_scores > score_thresh).squeeze(1)
    if keep.numel() > max_detections:
        _, order = max_scores[keep].sort(descending=True)
        keep = keep[order[:max_detections]]
    return boxes[keep], max_scores[keep], labels[keep], keep


def nms_per_class(boxes, scores, nms_thresh, score_thresh):
    """Loop over classes (column 0 is background) as in the original
    bottom-up attention Caffe code."""
    num_classes = scores.shape[1]
    result = []
    for j in range(1, num_classes):
        inds = torch.nonzero(scores[:, j] > score_thresh).squeeze(1)
        if inds.numel() == 0:
            continue
        scores_j = scores[inds, j]
        boxes_j = boxes[inds, j * 4: (j + 1) * 4]
        keep = nms(boxes_j, scores_j, nms_thresh)
        labels_j = torch.full((keep.numel(),), j, dtype=torch.int64, device=scores.device)
        result.append((boxes_j[keep], scores_j[keep], labels_j, inds[keep]))
    return result
