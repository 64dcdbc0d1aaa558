"""
Python front-end of det_ops._C.

All ops accept CPU or CUDA tensors; the C++ side dispatches on the tensor's device
(det_ops/csrc/vision.cpp) and raises for anything else.
"""
from typing import List, Optional, Tuple

import cupy as cp
import torch
import torchvision
from torch import Tensor
from torch.autograd import Function
from torch.autograd.function import once_differentiable

from det_ops import _C

__all__ = [
    "batched_nms",
    "box_iou",
    "score_voting",
    "decode_and_filter",
    "multilevel_roi_align",
    "MultiLevelRoIAlign",
    "topk_per_image",
]


def batched_nms(boxes: Tensor, scores: Tensor, idxs: Tensor, iou_threshold: float,
                max_out: int = 1000) -> Tensor:
    """Class-aware NMS in a single kernel launch (no coordinate-offset trick needed)."""
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.int64, device=boxes.device)
    if boxes.shape[0] > 40000 and not boxes.is_cuda:
        # the CPU kernel is quadratic; torchvision's coordinate trick is faster here
        return torchvision.ops.batched_nms(boxes, scores, idxs, iou_threshold)[:max_out]
    keep = _C.batched_nms(boxes.contiguous(), scores.contiguous(), idxs.contiguous(),
                          float(iou_threshold), int(max_out))
    return keep


def decode_and_filter(
    deltas: Tensor,
    anchors: Tensor,
    logits: Tensor,
    score_thresh: float,
    topk: int,
    weights: Tuple[float, float, float, float] = (1.0, 1.0, 1.0, 1.0),
    clip: Optional[Tuple[int, int]] = None,
) -> Tuple[Tensor, Tensor, Tensor]:
    """sigmoid -> threshold -> topk -> box decode, fused; returns (boxes, scores, labels)."""
    h, w = clip if clip is not None else (0, 0)
    boxes, scores, labels = _C.decode_and_filter(
        deltas.contiguous(), anchors.contiguous(), logits.contiguous(),
        float(score_thresh), int(topk), list(weights), int(h), int(w),
    )
    return boxes, scores, labels


def topk_per_image(scores: Tensor, image_ids: Tensor, k: int, num_images: int) -> Tensor:
    """segment-wise top-k over a flat score vector, implemented with a cupy RawKernel"""
    if not scores.is_cuda:
        out = []
        for i in range(num_images):
            m = (image_ids == i).nonzero(as_tuple=True)[0]
            out.append(m[scores[m].topk(min(k, m.numel())).indices])
        return torch.cat(out) if out else scores.new_empty((0,), dtype=torch.long)
    s = cp.from_dlpack(scores.detach())
    ids = cp.from_dlpack(image_ids.detach())
    order = cp.lexsort(cp.stack([-s, ids]))
    counts = cp.bincount(ids, minlength=num_images)
    starts = cp.concatenate([cp.zeros(1, dtype=counts.dtype), cp.cumsum(counts)[:-1]])
    rank = cp.arange(order.size) - cp.repeat(starts, counts.get().tolist())
    keep = order[rank < k]
    return torch.from_dlpack(keep.toDlpack()).long()


def box_iou(a: Tensor, b: Tensor) -> Tensor:
    """pairwise IoU, plain torch (used by score voting and by the tests)"""
    area_a = (a[:, 2] - a[:, 0]).clamp(min=0) * (a[:, 3] - a[:, 1]).clamp(min=0)
    area_b = (b[:, 2] - b[:, 0]).clamp(min=0) * (b[:, 3] - b[:, 1]).clamp(min=0)
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter / (area_a[:, None] + area_b[None, :] - inter).clamp(min=1e-6)


def score_voting(kept_boxes: Tensor, kept_scores: Tensor, all_boxes: Tensor, all_scores: Tensor,
                 sigma: float = 0.025) -> Tensor:
    """refine each kept box as an IoU-weighted average of its suppressed neighbours"""
    iou = box_iou(kept_boxes, all_boxes)
    w = torch.exp(-((1 - iou) ** 2) / sigma) * all_scores[None, :]
    w = w * (iou > 0).to(w.dtype)
    return (w @ all_boxes) / w.sum(dim=1, keepdim=True).clamp(min=1e-6)


class _MultiLevelRoIAlign(Function):
    @staticmethod
    def forward(ctx, features: List[Tensor], rois: Tensor, levels: Tensor,
                output_size: int, scales: List[float], sampling_ratio: int, aligned: bool):
        ctx.save_for_backward(rois, levels)
        ctx.shapes = [f.shape for f in features]
        ctx.args = (output_size, scales, sampling_ratio, aligned)
        return _C.multilevel_roi_align_forward(
            features, rois, levels, output_size, output_size, scales, sampling_ratio, aligned
        )

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        rois, levels = ctx.saved_tensors
        output_size, scales, sampling_ratio, aligned = ctx.args
        grads = _C.multilevel_roi_align_backward(
            grad_out.contiguous(), rois, levels, [list(s) for s in ctx.shapes],
            output_size, output_size, scales, sampling_ratio, aligned,
        )
        return (list(grads), None, None, None, None, None, None)


def multilevel_roi_align(features, rois, levels, output_size=7, scales=(0.25, 0.125, 0.0625, 0.03125),
                         sampling_ratio=2, aligned=True):
    return _MultiLevelRoIAlign.apply(list(features), rois, levels, output_size, list(scales),
                                     sampling_ratio, aligned)


class MultiLevelRoIAlign(torch.nn.Module):
    def __init__(self, output_size=7, scales=(0.25, 0.125, 0.0625, 0.03125), sampling_ratio=2,
                 canonical_scale=224, canonical_level=4):
        super().__init__()
        self.output_size = output_size
        self.scales = scales
        self.sampling_ratio = sampling_ratio
        self.canonical_scale = canonical_scale
        self.canonical_level = canonical_level
        self.k_min = 2
        self.k_max = 2 + len(scales) - 1

    def map_levels(self, rois: Tensor) -> Tensor:
        area = (rois[:, 3] - rois[:, 1]) * (rois[:, 4] - rois[:, 2])
        lvl = torch.floor(self.canonical_level + torch.log2(area.clamp(min=1e-6).sqrt() / self.canonical_scale))
        return (lvl.clamp(self.k_min, self.k_max) - self.k_min).to(torch.int32)

    def forward(self, features: List[Tensor], rois: Tensor) -> Tensor:
        levels = self.map_levels(rois)
        return multilevel_roi_align(features, rois, levels, self.output_size, self.scales,
                                    self.sampling_ratio)


def _self_test():
    torch.manual_seed(0)
    dev = "cuda"
    boxes = torch.rand(2000, 4, device=dev) * 512
    boxes[:, 2:] += boxes[:, :2]
    scores = torch.rand(2000, device=dev)
    idxs = torch.randint(0, 80, (2000,), device=dev)
    ref = torchvision.ops.batched_nms(boxes, scores, idxs, 0.5)
    got = batched_nms(boxes, scores, idxs, 0.5, max_out=ref.numel())
    assert torch.equal(ref.sort().values, got.sort().values), "batched_nms mismatch"
    print("det_ops self-test ok")


if __name__ == "__main__":
    _self_test()
