# Copyright (c) OpenMMLab. All rights reserved.
"""DBNet++ style head with a deformable refinement branch (research project)."""
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from mmcv.cnn import ConvModule
from mmcv.ops import ModulatedDeformConv2dPack
from mmengine.model import BaseModule

from mmocr.models.textdet.heads import BaseTextDetHead
from mmocr.registry import MODELS


class AdaptiveScaleFusion(BaseModule):
    """ASF module: spatial attention over the concatenated FPN levels."""

    def __init__(self, in_channels: int, num_levels: int = 4) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, in_channels, 3, padding=1)
        self.spatial = nn.Sequential(
            nn.Conv2d(1, 1, 3, padding=1, bias=False), nn.ReLU(inplace=True),
            nn.Conv2d(1, 1, 1, bias=False), nn.Sigmoid())
        self.level_attn = nn.Sequential(
            nn.Conv2d(in_channels, num_levels, 1, bias=False), nn.Sigmoid())

    def forward(self, x: torch.Tensor, levels: List[torch.Tensor]) -> torch.Tensor:
        feat = self.conv(x)
        attn = self.spatial(feat.mean(dim=1, keepdim=True)) + feat
        weights = self.level_attn(attn)
        out = [w.unsqueeze(1) * lvl for w, lvl in zip(weights.unbind(1), levels)]
        return torch.cat(out, dim=1)


@MODELS.register_module()
class DBPPDeformHead(BaseTextDetHead):
    """Probability / threshold head whose first conv is a DCNv2 layer."""

    def __init__(self,
                 in_channels: int,
                 with_bias: bool = False,
                 deform_groups: int = 1,
                 module_loss: Dict = dict(type='DBModuleLoss'),
                 postprocessor: Dict = dict(type='DBPostprocessor'),
                 init_cfg: Optional[Dict] = None) -> None:
        super().__init__(
            module_loss=module_loss, postprocessor=postprocessor,
            init_cfg=init_cfg)
        self.in_channels = in_channels
        self.dcn = ModulatedDeformConv2dPack(
            in_channels, in_channels // 4, 3, padding=1,
            deform_groups=deform_groups, bias=with_bias)
        self.binarize = nn.Sequential(
            nn.BatchNorm2d(in_channels // 4), nn.ReLU(inplace=True),
            nn.ConvTranspose2d(in_channels // 4, in_channels // 4, 2, 2),
            nn.BatchNorm2d(in_channels // 4), nn.ReLU(inplace=True),
            nn.ConvTranspose2d(in_channels // 4, 1, 2, 2))
        self.threshold = nn.Sequential(
            ConvModule(in_channels, in_channels // 4, 3, padding=1,
                       norm_cfg=dict(type='BN')),
            nn.ConvTranspose2d(in_channels // 4, in_channels // 4, 2, 2),
            nn.ReLU(inplace=True),
            nn.ConvTranspose2d(in_channels // 4, 1, 2, 2))
        self.sigmoid = nn.Sigmoid()
        self.k = 50.0

    def _diff_binarize(self, prob_map: torch.Tensor,
                       thr_map: torch.Tensor) -> torch.Tensor:
        # exp(-k(P-T)) overflows in half precision, keep this in fp32
        with torch.cuda.amp.autocast(enabled=False):
            prob_map = prob_map.float()
            thr_map = thr_map.float()
            return torch.reciprocal(1.0 + torch.exp(-self.k * (prob_map - thr_map)))

    def forward(self, img: torch.Tensor,
                data_samples=None, mode: str = 'predict') -> Tuple[torch.Tensor, ...]:
        feat = self.dcn(img)
        prob_logits = self.binarize(feat).squeeze(1)
        prob_map = self.sigmoid(prob_logits)
        if mode == 'predict':
            return prob_map
        thr_map = self.threshold(img).squeeze(1)
        binary_map = self._diff_binarize(prob_map, thr_map).squeeze(1)
        if mode == 'loss':
            return prob_logits, thr_map, binary_map
        return prob_logits, thr_map, binary_map, feat


@MODELS.register_module()
class BalancedDiceLoss(nn.Module):
    """Dice + OHEM BCE used for the shrink map; sums are taken in fp32."""

    def __init__(self, eps: float = 1e-6, negative_ratio: float = 3.0) -> None:
        super().__init__()
        self.eps = eps
        self.negative_ratio = negative_ratio

    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)
    def forward(self, pred: torch.Tensor, gt: torch.Tensor,
                mask: torch.Tensor) -> torch.Tensor:
        positive = (gt * mask).bool()
        negative = ((1 - gt) * mask).bool()
        positive_count = int(positive.float().sum())
        negative_count = min(int(negative.float().sum()),
                             int(positive_count * self.negative_ratio))
        loss = F.binary_cross_entropy(pred, gt, reduction='none')
        positive_loss = loss[positive]
        negative_loss = loss[negative]
        if negative_count > 0:
            negative_loss, _ = torch.topk(negative_loss, negative_count)
        bce = (positive_loss.sum() + negative_loss.sum()) / (
            positive_count + negative_count + self.eps)
        inter = (pred * gt * mask).sum()
        union = (pred * mask).sum() + (gt * mask).sum() + self.eps
        dice = 1 - 2.0 * inter / union
        return bce + dice

    def extra_repr(self) -> str:
        device = 'cuda' if torch.cuda.is_available() else 'cpu'
        return f'eps={self.eps}, negative_ratio={self.negative_ratio}, device={device}'
