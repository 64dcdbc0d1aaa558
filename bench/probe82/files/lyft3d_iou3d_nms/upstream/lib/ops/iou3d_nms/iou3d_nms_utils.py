"""3D IoU and rotated NMS for the Lyft 3D Object Detection for Autonomous Vehicles pipeline.

Thin Python layer over our compiled ``iou3d_nms_cuda`` extension (see setup.py), in the style of
OpenPCDet's pcdet/ops/iou3d_nms. Boxes are (N, 7) [x, y, z, dx, dy, dz, heading] in LiDAR frame.
"""
import torch

from ...utils import common_utils
from . import iou3d_nms_cuda


def boxes_bev_iou_cpu(boxes_a, boxes_b):
    """CPU reference implementation (slow), used in unit tests only.

    Args:
        boxes_a: (N, 7) [x, y, z, dx, dy, dz, heading]
        boxes_b: (M, 7)
    Returns:
        ans_iou: (N, M)
    """
    boxes_a, is_numpy = common_utils.check_numpy_to_torch(boxes_a)
    boxes_b, is_numpy = common_utils.check_numpy_to_torch(boxes_b)
    assert not (boxes_a.is_cuda or boxes_b.is_cuda), 'Only support CPU tensors'
    assert boxes_a.shape[1] == 7 and boxes_b.shape[1] == 7
    ans_iou = boxes_a.new_zeros(torch.Size((boxes_a.shape[0], boxes_b.shape[0])))
    iou3d_nms_cuda.boxes_iou_bev_cpu(boxes_a.contiguous(), boxes_b.contiguous(), ans_iou)
    return ans_iou.numpy() if is_numpy else ans_iou


def boxes_iou_bev(boxes_a, boxes_b):
    """Rotated BEV IoU of two GPU box sets: (N, 7) x (M, 7) -> (N, M)."""
    assert boxes_a.shape[1] == boxes_b.shape[1] == 7
    ans_iou = torch.cuda.FloatTensor(torch.Size((boxes_a.shape[0], boxes_b.shape[0]))).zero_()
    iou3d_nms_cuda.boxes_iou_bev_gpu(boxes_a.contiguous(), boxes_b.contiguous(), ans_iou)
    return ans_iou


def _height_bounds(boxes, as_row):
    zc, h = boxes[:, 2], boxes[:, 5]
    top, bottom = zc + h / 2, zc - h / 2
    shape = (1, -1) if as_row else (-1, 1)
    return top.view(*shape), bottom.view(*shape)


def boxes_iou3d_gpu(boxes_a, boxes_b):
    """Full 3D IoU = BEV rotated overlap x vertical overlap / union of volumes.

    boxes_a: (N, 7), boxes_b: (M, 7) on the GPU -> (N, M)
    """
    assert boxes_a.shape[1] == boxes_b.shape[1] == 7
    top_a, bottom_a = _height_bounds(boxes_a, as_row=False)
    top_b, bottom_b = _height_bounds(boxes_b, as_row=True)

    bev_overlap = torch.cuda.FloatTensor(torch.Size((boxes_a.shape[0], boxes_b.shape[0]))).zero_()  # (N, M)
    iou3d_nms_cuda.boxes_overlap_bev_gpu(boxes_a.contiguous(), boxes_b.contiguous(), bev_overlap)

    h_overlap = (torch.min(top_a, top_b) - torch.max(bottom_a, bottom_b)).clamp(min=0)
    inter_3d = bev_overlap * h_overlap
    vol_a = boxes_a[:, 3:6].prod(dim=1).view(-1, 1)
    vol_b = boxes_b[:, 3:6].prod(dim=1).view(1, -1)
    return inter_3d / torch.clamp(vol_a + vol_b - inter_3d, min=1e-6)


def nms_gpu(boxes, scores, thresh, pre_maxsize=None, **kwargs):
    """Rotated-BEV NMS on the GPU; returns (kept indices into ``boxes``, None)."""
    assert boxes.shape[1] == 7
    order = scores.sort(0, descending=True)[1]
    if pre_maxsize is not None:
        order = order[:pre_maxsize]

    boxes = boxes[order].contiguous()
    keep = torch.LongTensor(boxes.size(0))
    num_out = iou3d_nms_cuda.nms_gpu(boxes, keep, thresh)
    return order[keep[:num_out].cuda()].contiguous(), None


def nms_normal_gpu(boxes, scores, thresh, **kwargs):
    """Axis-aligned BEV NMS (ignores heading), used for the small classes (bicycle, animal)."""
    assert boxes.shape[1] == 7
    order = scores.sort(0, descending=True)[1]

    boxes = boxes[order].contiguous()

    keep = torch.LongTensor(boxes.size(0))
    num_out = iou3d_nms_cuda.nms_normal_gpu(boxes, keep, thresh)
    return order[keep[:num_out].cuda(non_blocking=True)].contiguous(), None


def class_agnostic_nms(box_scores, box_preds, nms_config, score_thresh=None):
    src_box_scores = box_scores
    if score_thresh is not None:
        scores_mask = (box_scores >= score_thresh)
        box_scores = box_scores[scores_mask]
        box_preds = box_preds[scores_mask]

    selected = []
    if box_scores.shape[0] > 0:
        box_scores_nms, indices = torch.topk(box_scores, k=min(nms_config.NMS_PRE_MAXSIZE, box_scores.shape[0]))
        boxes_for_nms = box_preds[indices]
        nms_fn = nms_gpu if nms_config.NMS_TYPE == 'nms_gpu' else nms_normal_gpu
        keep_idx, selected_scores = nms_fn(boxes_for_nms[:, 0:7], box_scores_nms, nms_config.NMS_THRESH)
        selected = indices[keep_idx[:nms_config.NMS_POST_MAXSIZE]]

    if score_thresh is not None:
        original_idxs = scores_mask.nonzero().view(-1)
        selected = original_idxs[selected]
    return selected, src_box_scores[selected]
