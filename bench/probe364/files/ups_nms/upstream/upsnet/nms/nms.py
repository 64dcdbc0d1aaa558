# ---------------------------------------------------------------------------
# Unified Panoptic Segmentation Network
#
# Modified from py-faster-rcnn / Deformable-ConvNets
# Licensed under The MIT License [see LICENSE for details]
# ---------------------------------------------------------------------------

import numpy as np
import torch

from upsnet.operators import nms_cuda


def py_nms_wrapper(thresh):
    def _nms(dets):
        return nms(dets, thresh)
    return _nms


def py_softnms_wrapper(thresh, max_dets=-1):
    def _nms(dets):
        return soft_nms(dets, thresh, max_dets)
    return _nms


def gpu_nms_wrapper(thresh, device_id):
    """NMS on the GPU given by `device_id`; dets is a numpy array [N, 5] (x1, y1, x2, y2, score)."""
    def _nms(dets):
        if dets.shape[0] == 0:
            return []
        dets_t = torch.from_numpy(dets).float().cuda(device_id)
        keep = nms_cuda.nms(dets_t, thresh)
        return keep.cpu().numpy().tolist()
    return _nms


def torch_nms_wrapper(thresh):
    """NMS on tensors that already live on the GPU; returns a LongTensor of kept indices."""
    def _nms(boxes, scores):
        if boxes.numel() == 0:
            return boxes.new_zeros((0,), dtype=torch.long)
        order = scores.sort(descending=True)[1]
        dets = torch.cat([boxes, scores[:, None]], dim=1)[order].contiguous()
        keep = nms_cuda.nms(dets, thresh)
        return order[keep]
    return _nms


def nms(dets, thresh):
    """
    greedily select boxes with high confidence and overlap with current maximum <= thresh
    rule out overlap >= thresh
    :param dets: [[x1, y1, x2, y2 score]]
    :param thresh: retain overlap < thresh
    :return: indexes to keep
    """
    if dets.shape[0] == 0:
        return []

    x1 = dets[:, 0]
    y1 = dets[:, 1]
    x2 = dets[:, 2]
    y2 = dets[:, 3]
    scores = dets[:, 4]

    areas = (x2 - x1 + 1) * (y2 - y1 + 1)
    order = scores.argsort()[::-1]

    keep = []
    while order.size > 0:
        i = order[0]
        keep.append(i)
        xx1 = np.maximum(x1[i], x1[order[1:]])
        yy1 = np.maximum(y1[i], y1[order[1:]])
        xx2 = np.minimum(x2[i], x2[order[1:]])
        yy2 = np.minimum(y2[i], y2[order[1:]])

        w = np.maximum(0.0, xx2 - xx1 + 1)
        h = np.maximum(0.0, yy2 - yy1 + 1)
        inter = w * h
        ovr = inter / (areas[i] + areas[order[1:]] - inter)

        inds = np.where(ovr <= thresh)[0]
        order = order[inds + 1]

    return keep


def soft_nms(dets, thresh, max_dets, sigma=0.5, method='linear', score_thresh=0.001):
    """Soft-NMS (Bodla et al.) on a numpy array of detections, CPU only."""
    if dets.shape[0] == 0:
        return np.zeros((0, 5))
    dets = dets.copy()
    keep_dets = []
    while dets.shape[0] > 0:
        max_idx = np.argmax(dets[:, 4])
        max_det = dets[max_idx].copy()
        keep_dets.append(max_det)
        dets = np.delete(dets, max_idx, axis=0)
        if dets.shape[0] == 0:
            break
        xx1 = np.maximum(max_det[0], dets[:, 0])
        yy1 = np.maximum(max_det[1], dets[:, 1])
        xx2 = np.minimum(max_det[2], dets[:, 2])
        yy2 = np.minimum(max_det[3], dets[:, 3])
        w = np.maximum(0.0, xx2 - xx1 + 1)
        h = np.maximum(0.0, yy2 - yy1 + 1)
        inter = w * h
        area_max = (max_det[2] - max_det[0] + 1) * (max_det[3] - max_det[1] + 1)
        areas = (dets[:, 2] - dets[:, 0] + 1) * (dets[:, 3] - dets[:, 1] + 1)
        ovr = inter / (area_max + areas - inter)
        if method == 'linear':
            weight = np.where(ovr > thresh, 1 - ovr, 1)
        else:
            weight = np.exp(-(ovr * ovr) / sigma)
        dets[:, 4] = dets[:, 4] * weight
        dets = dets[dets[:, 4] > score_thresh]
    keep_dets = np.array(keep_dets)
    if max_dets > 0:
        keep_dets = keep_dets[:max_dets]
    return keep_dets
