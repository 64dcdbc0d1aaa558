# Copyright (c) Facebook, Inc. and its affiliates. All Rights Reserved.
# from ._utils import _C
from maskrcnn_benchmark import _C

from apex import amp

# Only valid with fp32 inputs - give AMP the hint
nms = amp.float_function(_C.nms)

# multi-label nms used by FCOS / RetinaNet post-processing: boxes of different
# labels never suppress each other (labels are passed as a float tensor)
ml_nms = amp.float_function(_C.ml_nms)

# nms(boxes, scores, nms_thresh, max_proposals=-1, score_field='scores')
# is exposed through maskrcnn_benchmark.structures.boxlist_ops.boxlist_nms


def batched_nms_fallback(boxes, scores, idxs, iou_threshold):
    """Pure-python alternative to ml_nms used by the unit tests (CPU only).

    Offsets every box by its class index so that one single-class NMS call
    never suppresses across classes.
    """
    if boxes.numel() == 0:
        return boxes.new_empty((0,), dtype=boxes.dtype).long()
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + 1)
    boxes_for_nms = boxes + offsets[:, None]
    keep = nms(boxes_for_nms, scores, iou_threshold)
    return keep
