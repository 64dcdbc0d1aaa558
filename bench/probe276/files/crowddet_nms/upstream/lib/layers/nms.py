# -*- coding: utf-8 -*-
# NMS on device tensors for the RPN proposal stage. The test-time set-NMS
# (EMD pairs) runs on CPU in utils/nms_utils.py and is not touched here.
import torch

from layers import _C


def nms(boxes, scores, iou_threshold):
    """
    Performs non-maximum suppression (NMS) on the boxes according
    to their intersection-over-union (IoU).

    Arguments:
        boxes (Tensor[N, 4]): boxes in (x1, y1, x2, y2) format
        scores (Tensor[N]): scores for each one of the boxes
        iou_threshold (float): discards all overlapping boxes with IoU > iou_threshold

    Returns:
        keep (Tensor): int64 tensor with the indices of the elements kept by NMS,
        sorted in decreasing order of scores
    """
    return _C.nms(boxes, scores, iou_threshold)


def batched_nms(boxes, scores, idxs, iou_threshold):
    """
    Performs non-maximum suppression in a batched fashion.

    Each index value correspond to a category, and NMS
    will not be applied between elements of different categories.
    """
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64, device=boxes.device)
    # strategy: in order to perform NMS independently per class.
    # we add an offset to all the boxes. The offset is dependent
    # only on the class idx, and is large enough so that boxes
    # from different classes do not overlap
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + 1)
    boxes_for_nms = boxes + offsets[:, None]
    keep = nms(boxes_for_nms, scores, iou_threshold)
    return keep


def batched_nms_per_image(boxes, scores, batch_inds, iou_threshold, max_per_image):
    """Used by find_top_rpn_proposals: NMS inside each image of the mini-batch,
    then keep the top `max_per_image` of each image."""
    keep_all = []
    for bid in torch.unique(batch_inds):
        inds = torch.nonzero(batch_inds == bid, as_tuple=False).squeeze(1)
        keep = nms(boxes[inds], scores[inds], iou_threshold)
        keep_all.append(inds[keep[:max_per_image]])
    if len(keep_all) == 0:
        return torch.empty((0,), dtype=torch.int64, device=boxes.device)
    return torch.cat(keep_all)


def set_nms(boxes, scores, idents, iou_threshold):
    """Set-NMS (CrowdDet, Sec. 3.3) on device tensors: two boxes predicted by the
    same proposal (same `idents`) never suppress each other. Equivalent to
    utils/nms_utils.set_cpu_nms but avoids the device->host copy at test time.

    boxes: (N, 4), scores: (N,), idents: (N,) proposal index of every box.
    """
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64, device=boxes.device)
    order = scores.argsort(descending=True)
    boxes, idents = boxes[order], idents[order]
    x1, y1, x2, y2 = boxes.unbind(1)
    areas = (x2 - x1) * (y2 - y1)
    suppressed = torch.zeros(boxes.shape[0], dtype=torch.bool, device=boxes.device)
    keep = []
    for i in range(boxes.shape[0]):
        if suppressed[i]:
            continue
        keep.append(i)
        xx1 = torch.max(x1[i], x1[i + 1:])
        yy1 = torch.max(y1[i], y1[i + 1:])
        xx2 = torch.min(x2[i], x2[i + 1:])
        yy2 = torch.min(y2[i], y2[i + 1:])
        inter = (xx2 - xx1).clamp(min=0) * (yy2 - yy1).clamp(min=0)
        iou = inter / (areas[i] + areas[i + 1:] - inter)
        same_set = idents[i + 1:] == idents[i]
        suppressed[i + 1:] |= (iou > iou_threshold) & ~same_set
    keep = torch.as_tensor(keep, dtype=torch.int64, device=boxes.device)
    return order[keep]
