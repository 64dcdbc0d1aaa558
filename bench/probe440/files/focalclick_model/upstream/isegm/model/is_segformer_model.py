import torch
import torch.nn as nn
import torch.nn.functional as F
from torchvision.ops.roi_align import roi_align

from isegm.utils.serialization import serialize
from .is_model import ISModel
from .modeling.segformer import MixVisionTransformer, SegFormerHead
from .modeling.basic_blocks import ConvModule
from isegm.model.modifiers import LRMult


class SegFormerModel(ISModel):
    @serialize
    def __init__(self, feature_stride=4, backbone_lr_mult=0.1,
                 norm_layer=nn.BatchNorm2d, pipeline_version='s1', model_version='b0',
                 focus_crop_r=1.4, refine_size=256, **kwargs):
        super().__init__(norm_layer=norm_layer, **kwargs)

        self.pipeline_version = pipeline_version
        self.model_version = model_version
        self.focus_crop_r = focus_crop_r
        self.refine_size = refine_size

        self.feature_extractor = MixVisionTransformer.build(model_version)
        self.feature_extractor.apply(LRMult(backbone_lr_mult))

        embed_dims = self.feature_extractor.embed_dims
        if self.pipeline_version == 's1':
            base_radius = 3
        else:
            base_radius = 5

        self.head = SegFormerHead(in_channels=embed_dims, embedding_dim=256, num_classes=1)
        self.refiner = RefineLayer(feature_dims=embed_dims[0], mid_dims=32)

        self.maps_transform = nn.Sequential(
            nn.Conv2d(in_channels=3, out_channels=16, kernel_size=3, stride=2, padding=1),
            nn.LeakyReLU(negative_slope=0.2),
            nn.Conv2d(16, embed_dims[0], kernel_size=3, stride=2, padding=1),
        )

    def get_coord_features(self, image, prev_mask, points):
        coord_features = self.dist_maps(image, points)
        if prev_mask is not None:
            coord_features = torch.cat((prev_mask, coord_features), dim=1)
        return coord_features

    def backbone_forward(self, image, coord_features=None):
        coord_features = self.maps_transform(coord_features)
        feats = self.feature_extractor(image, coord_features)
        pred_logits = self.head(feats)
        return {'instances': pred_logits, 'instances_aux': pred_logits, 'feature': feats[0]}

    def forward(self, image, points, gt_mask=None):
        image, prev_mask = self.prepare_input(image)
        coord_features = self.get_coord_features(image, prev_mask, points)
        click_map = coord_features[:, 1:, :, :]

        small_image = F.interpolate(image, scale_factor=0.5, mode='bilinear', align_corners=True)
        small_coord = F.interpolate(coord_features, scale_factor=0.5, mode='bilinear', align_corners=True)

        outputs = self.backbone_forward(small_image, small_coord)
        outputs['click_map'] = click_map
        outputs['instances'] = F.interpolate(outputs['instances'], size=image.size()[2:],
                                             mode='bilinear', align_corners=True)
        outputs['instances_aux'] = outputs['instances']

        boxes = self.get_focus_boxes(outputs['instances'], points, image.shape[-2:])
        outputs['focus_boxes'] = boxes

        crop_image = roi_align(image, boxes, self.refine_size, spatial_scale=1.0, aligned=True)
        crop_click = roi_align(click_map, boxes, self.refine_size, spatial_scale=1.0, aligned=True)
        crop_coarse = roi_align(outputs['instances'], boxes, self.refine_size, spatial_scale=1.0, aligned=True)
        crop_feat = roi_align(outputs['feature'], boxes, self.refine_size // 4, spatial_scale=0.125, aligned=True)

        refined, trimap = self.refiner(crop_image, crop_click, crop_coarse, crop_feat)
        outputs['instances_refined'] = refined
        outputs['trimap'] = trimap
        return outputs

    def get_focus_boxes(self, coarse_logits, points, image_size):
        """Box around the union of the current prediction and the newest click, enlarged by focus_crop_r."""
        h, w = image_size
        probs = torch.sigmoid(coarse_logits) > 0.5
        boxes = []
        for b in range(probs.shape[0]):
            ys, xs = torch.nonzero(probs[b, 0], as_tuple=True)
            valid = points[b][points[b, :, 0] >= 0]
            last = valid[valid[:, 2].argmax()] if valid.numel() > 0 else points.new_tensor([h / 2, w / 2, 0])
            if ys.numel() == 0:
                y1 = y2 = last[0]
                x1 = x2 = last[1]
            else:
                y1, y2 = torch.min(ys.min().float(), last[0]), torch.max(ys.max().float(), last[0])
                x1, x2 = torch.min(xs.min().float(), last[1]), torch.max(xs.max().float(), last[1])
            cy, cx = (y1 + y2) / 2, (x1 + x2) / 2
            half = torch.clamp(torch.max(y2 - y1, x2 - x1) * self.focus_crop_r / 2, min=20.0)
            box = torch.stack([cx - half, cy - half, cx + half, cy + half])
            box[0::2] = box[0::2].clamp(0, w - 1)
            box[1::2] = box[1::2].clamp(0, h - 1)
            boxes.append(torch.cat([box.new_tensor([b]), box]))
        return torch.stack(boxes, dim=0)

    def refine(self, cropped_image, cropped_points, full_feature, full_logits, focus_roi):
        """Called by the FocalPredictor at inference time on a fixed crop."""
        crop_feat = roi_align(full_feature, focus_roi, self.refine_size // 4, spatial_scale=0.125, aligned=True)
        crop_coarse = roi_align(full_logits, focus_roi, self.refine_size, spatial_scale=1.0, aligned=True)
        click_map = self.dist_maps(cropped_image, cropped_points)[:, 1:]
        refined, trimap = self.refiner(cropped_image, click_map, crop_coarse, crop_feat)
        return {'instances_refined': refined, 'instances_coarse': crop_coarse, 'trimap': trimap}


class RefineLayer(nn.Module):
    def __init__(self, feature_dims=64, mid_dims=32, norm_layer=nn.BatchNorm2d):
        super(RefineLayer, self).__init__()
        self.image_conv1 = ConvModule(in_channels=3 + 1 + 1, out_channels=mid_dims, kernel_size=3,
                                      stride=2, padding=1, norm_cfg=dict(type='BN', requires_grad=True))
        self.image_conv2 = XConvBnRelu(mid_dims, mid_dims)
        self.image_conv3 = XConvBnRelu(mid_dims, mid_dims)

        self.refine_fusion = ConvModule(in_channels=feature_dims, out_channels=mid_dims, kernel_size=1,
                                        stride=1, padding=0, norm_cfg=dict(type='BN', requires_grad=True))
        self.refine_fusion2 = XConvBnRelu(mid_dims, mid_dims)
        self.refine_fusion3 = XConvBnRelu(mid_dims, mid_dims)
        self.refine_pred = nn.Conv2d(mid_dims, 1, 3, 1, 1)
        self.refine_trimap = nn.Conv2d(mid_dims, 1, 3, 1, 1)

    def forward(self, input_image, click_map, final_feature, cropped_feature):
        mask = final_feature
        input_image = torch.cat([input_image, click_map, mask], 1)
        image_feature = self.image_conv1(input_image)
        image_feature = self.image_conv2(image_feature)
        image_feature = self.image_conv3(image_feature)

        cropped_feature = self.refine_fusion(cropped_feature)
        cropped_feature = F.interpolate(cropped_feature, size=image_feature.size()[2:],
                                        mode='bilinear', align_corners=True)
        fused = image_feature + cropped_feature
        fused = self.refine_fusion2(fused)
        fused = self.refine_fusion3(fused)

        pred_trimap = self.refine_trimap(fused)
        pred_trimap = F.interpolate(pred_trimap, size=input_image.size()[2:], mode='bilinear', align_corners=True)
        pred = self.refine_pred(fused)
        pred = F.interpolate(pred, size=input_image.size()[2:], mode='bilinear', align_corners=True)

        trimap_prob = torch.sigmoid(pred_trimap)
        pred = pred * trimap_prob + mask * (1 - trimap_prob)
        return pred, pred_trimap


class XConvBnRelu(nn.Module):
    """Depthwise-separable conv + BN + ReLU used by the lightweight refiner."""

    def __init__(self, in_dim, out_dim, norm_layer=nn.BatchNorm2d):
        super(XConvBnRelu, self).__init__()
        self.conv3x3 = nn.Conv2d(in_dim, in_dim, 3, 1, 1, groups=in_dim)
        self.conv1x1 = nn.Conv2d(in_dim, out_dim, 1, 1, 0)
        self.norm = norm_layer(out_dim)
        self.activation = nn.ReLU()

    def forward(self, x):
        x = self.conv3x3(x)
        x = self.conv1x1(x)
        x = self.norm(x)
        x = self.activation(x)
        return x
