# Line NMS for lane proposals.
#
# Adapted from the box NMS kernel of Grégoire Payen de La Garanderie (Durham University),
# modified to use the mean horizontal distance between two lanes as overlap measure.
# The compiled module `nms_impl` is produced by the top-level setup.py (CUDA only).
import torch

from . import nms_impl


def nms(boxes, scores, overlap, top_k):
    """Non-maximum suppression of lane proposals.

    Args:
        boxes (Tensor): [N, 4 + S] proposals: 2 scores, start_y, start_x, length, S x-coordinates in pixels.
            Must live on the GPU and be contiguous.
        scores (Tensor): [N] confidences.
        overlap (float): distance threshold (pixels) under which two lanes are considered duplicates.
        top_k (int): maximum number of lanes to keep.

    Returns:
        keep (LongTensor): indices of the kept proposals (valid up to ``num_to_keep``),
        num_to_keep (int),
        parent_object_index (LongTensor): for every proposal, the index of the lane that suppressed it.
    """
    if boxes.shape[0] == 0:
        empty = boxes.new_zeros((0, ), dtype=torch.long)
        return empty, 0, empty
    return nms_impl.nms_forward(boxes, scores, overlap, top_k)
