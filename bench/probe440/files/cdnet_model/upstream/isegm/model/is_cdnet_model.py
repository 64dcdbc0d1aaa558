import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from isegm.utils.serialization import serialize
from .is_model import ISModel
from .modeling.deeplab_v3 import DeepLabV3Plus
from .modeling.basic_blocks import SepConvHead
from .modeling.cdnet.FDM import FDM_v2
from .modeling.cdnet.PDM import DiffisionPropagation
from isegm.model.modifiers import LRMult


class CDNetModel(ISModel):
    """Conditional Diffusion Network (CDNet).

    A DeepLabV3+ segmentor whose decoder features are diffused from the clicked
    pixels (FDM) and whose output is refined with a click-conditioned pixel
    diffusion (PDM) on a downsampled grid.
    """

    @serialize
    def __init__(self, backbone='resnet50', deeplab_ch=256, aspp_dropout=0.5,
                 backbone_norm_layer=None, backbone_lr_mult=0.1, norm_layer=nn.BatchNorm2d,
                 pdm_iters=5, **kwargs):
        super().__init__(norm_layer=norm_layer, **kwargs)

        self.feature_extractor = DeepLabV3Plus(backbone=backbone, ch=deeplab_ch, project_dropout=aspp_dropout,
                                               norm_layer=norm_layer, backbone_norm_layer=backbone_norm_layer)
        self.feature_extractor.backbone.apply(LRMult(backbone_lr_mult))
        self.head = SepConvHead(1, in_channels=deeplab_ch, mid_channels=deeplab_ch // 2,
                                num_layers=2, norm_layer=norm_layer)

        self.fdm = FDM_v2(in_channels=deeplab_ch)
        self.pdm = DiffisionPropagation(iters=pdm_iters)
        self.aux_head = nn.Conv2d(deeplab_ch, 1, 1)
        self.pos_feat_proj = nn.Conv2d(deeplab_ch, deeplab_ch // 2, 1)

    def backbone_forward(self, image, coord_features=None):
        backbone_features = self.feature_extractor(image, coord_features)
        return {'instances': self.head(backbone_features[0]), 'feature': backbone_features[0]}

    def forward(self, image, points, gt_mask=None):
        image, prev_mask = self.prepare_input(image)
        coord_features = self.get_coord_features(image, prev_mask, points)

        if self.rgb_conv is not None:
            x = self.rgb_conv(torch.cat((image, coord_features), dim=1))
            outputs = self.backbone_forward(x)
        else:
            coord_features = self.maps_transform(coord_features)
            outputs = self.backbone_forward(image, coord_features)

        feature = outputs['feature']
        click_map = F.interpolate(coord_features, size=feature.shape[-2:], mode='bilinear', align_corners=True)
        pos_map, neg_map = self.get_click_maps(points, feature.shape[-2:], image.shape[-2:])

        feature = self.fdm(feature, pos_map, neg_map)
        coarse = self.head(feature)
        aux = self.aux_head(feature)

        refined = self.pdm(feature, coarse, pos_map, neg_map)

        outputs['instances'] = F.interpolate(refined, size=image.size()[2:],
                                             mode='bilinear', align_corners=True)
        outputs['instances_aux'] = F.interpolate(aux, size=image.size()[2:],
                                                 mode='bilinear', align_corners=True)
        outputs['click_map'] = click_map
        return outputs

    def get_click_maps(self, points, feat_size, image_size):
        """Rasterise positive / negative clicks on the feature grid (one-hot maps)."""
        bs = points.shape[0]
        fh, fw = feat_size
        ih, iw = image_size
        num_points = points.shape[1] // 2

        pos_map = torch.zeros(bs, 1, fh, fw).cuda()
        neg_map = torch.zeros(bs, 1, fh, fw).cuda()

        scale_y = fh / ih
        scale_x = fw / iw
        for b in range(bs):
            for i in range(points.shape[1]):
                y, x, order = points[b, i]
                if y < 0 or x < 0:
                    continue
                fy = min(int(y * scale_y), fh - 1)
                fx = min(int(x * scale_x), fw - 1)
                if i < num_points:
                    pos_map[b, 0, fy, fx] = 1.0
                else:
                    neg_map[b, 0, fy, fx] = 1.0
        return pos_map, neg_map


def get_click_weights(points, click_decay=0.9):
    """Older clicks get exponentially smaller weights during propagation."""
    orders = points[:, :, 2].cpu().numpy()
    max_order = np.maximum(orders.max(axis=1, keepdims=True), 1)
    weights = np.power(click_decay, max_order - orders)
    weights[orders < 0] = 0
    return torch.from_numpy(weights).float().cuda(non_blocking=True)
