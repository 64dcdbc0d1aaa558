"""Temporal RoI-Align used by the event refinement head.

The forward/backward kernels live in ``csrc/temporal_roi_align_cuda.cu`` and
are built by ``python setup.py build_ext --inplace``. A slow pure-PyTorch
reference (``temporal_roi_align_ref``) is kept for unit tests.
"""
import torch
import torch.nn as nn
from torch.autograd import Function
from torch.autograd.function import once_differentiable

try:
    import temporal_roi_align_cuda as _C
except ImportError:  # extension not compiled
    _C = None

try:
    import nms_1d_cpu
except ImportError:
    nms_1d_cpu = None


class _TemporalROIAlign(Function):
    @staticmethod
    def forward(ctx, feats, rois, output_size, spatial_scale, sampling_ratio, aligned):
        # feats: (B, C, T) ; rois: (K, 3) = (batch_idx, start, end) in snippet units
        if _C is None:
            raise RuntimeError("temporal_roi_align_cuda is not built; run `python setup.py build_ext --inplace`")
        if not feats.is_cuda:
            raise NotImplementedError("TemporalROIAlign only supports CUDA tensors")
        ctx.output_size = output_size
        ctx.spatial_scale = spatial_scale
        ctx.sampling_ratio = sampling_ratio
        ctx.aligned = aligned
        ctx.feat_shape = feats.size()
        ctx.save_for_backward(rois)
        output = _C.forward(feats.contiguous(), rois.contiguous(), spatial_scale,
                            output_size, sampling_ratio, aligned)
        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        rois, = ctx.saved_tensors
        B, C, T = ctx.feat_shape
        grad_input = _C.backward(grad_output.contiguous(), rois, ctx.spatial_scale,
                                 ctx.output_size, B, C, T, ctx.sampling_ratio, ctx.aligned)
        return grad_input, None, None, None, None, None


temporal_roi_align = _TemporalROIAlign.apply


def temporal_roi_align_ref(feats, rois, output_size, spatial_scale=1.0, sampling_ratio=2, aligned=True):
    """Reference implementation (linear interpolation, average of samples)."""
    K = rois.size(0)
    B, C, T = feats.shape
    out = feats.new_zeros(K, C, output_size)
    offset = 0.5 if aligned else 0.0
    for k in range(K):
        b = int(rois[k, 0])
        start = rois[k, 1] * spatial_scale - offset
        end = rois[k, 2] * spatial_scale - offset
        length = end - start if aligned else torch.clamp(end - start, min=1.0)
        bin_size = length / output_size
        n = sampling_ratio if sampling_ratio > 0 else int(torch.ceil(length / output_size))
        for i in range(output_size):
            acc = feats.new_zeros(C)
            for s in range(n):
                t = start + i * bin_size + (s + 0.5) * bin_size / n
                if t < -1.0 or t > T:
                    continue
                t = torch.clamp(t, min=0.0)
                t0 = int(torch.floor(t))
                t1 = min(t0 + 1, T - 1)
                if t0 >= T - 1:
                    t0 = t1 = T - 1
                    t = t.new_tensor(float(t0))
                w1 = t - t0
                acc += feats[b, :, t0] * (1 - w1) + feats[b, :, t1] * w1
            out[k, :, i] = acc / max(n, 1)
    return out


class TemporalROIAlign(nn.Module):
    def __init__(self, output_size, spatial_scale=1.0, sampling_ratio=2, aligned=True):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, feats, rois):
        return temporal_roi_align(feats, rois, self.output_size, self.spatial_scale,
                                  self.sampling_ratio, self.aligned)

    def extra_repr(self):
        return "output_size={}, spatial_scale={}, sampling_ratio={}, aligned={}".format(
            self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned)


class RoIRefineHead(nn.Module):
    """Refine coarse event segments with RoI-aligned features.

    Predicts (d_start, d_end) offsets and an IoU score for each proposal.
    """

    def __init__(self, in_dim, hidden_dim=256, output_size=8, feat_stride=1):
        super().__init__()
        self.roi_align = TemporalROIAlign(output_size, spatial_scale=1.0 / feat_stride)
        self.fc = nn.Sequential(
            nn.Linear(in_dim * output_size, hidden_dim),
            nn.ReLU(inplace=True),
            nn.Linear(hidden_dim, hidden_dim),
            nn.ReLU(inplace=True),
        )
        self.reg = nn.Linear(hidden_dim, 2)
        self.iou = nn.Linear(hidden_dim, 1)

    def forward(self, feats, proposals):
        # proposals: list (len B) of (K_b, 2) segments in snippet units
        rois = []
        for b, segs in enumerate(proposals):
            idx = segs.new_full((segs.shape[0], 1), float(b))
            rois.append(torch.cat([idx, segs], dim=1))
        rois = torch.cat(rois, dim=0)
        x = self.roi_align(feats, rois).flatten(1)
        x = self.fc(x)
        return self.reg(x), self.iou(x).squeeze(-1).sigmoid()


def batched_nms_1d(segs, scores, cls_idxs, iou_threshold, min_score, max_seg_num, use_soft_nms=True,
                   multiclass=True, sigma=0.5, voting_thresh=0.75):
    """1D NMS on CPU (the C++ op is compiled with OpenMP, no GPU needed)."""
    segs, scores, cls_idxs = segs.cpu(), scores.cpu(), cls_idxs.cpu()
    num_segs = segs.shape[0]
    if num_segs == 0:
        return torch.zeros([0, 2]), torch.zeros([0, ]), torch.zeros([0, ], dtype=cls_idxs.dtype)
    if use_soft_nms:
        new_segs, new_scores, new_cls_idxs = nms_1d_cpu.softnms(
            segs.contiguous(), scores.contiguous(), cls_idxs.contiguous(),
            iou_threshold, sigma, min_score, 2 if multiclass else 1)
    else:
        new_segs, new_scores, new_cls_idxs = nms_1d_cpu.nms(
            segs.contiguous(), scores.contiguous(), cls_idxs.contiguous(),
            iou_threshold, min_score, multiclass)
    # sort based on scores and return
    _, idxs = new_scores.sort(descending=True)
    max_seg_num = min(max_seg_num, new_segs.shape[0])
    return new_segs[idxs[:max_seg_num]], new_scores[idxs[:max_seg_num]], new_cls_idxs[idxs[:max_seg_num]]
