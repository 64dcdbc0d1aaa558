import math
import copy
from collections import OrderedDict
from functools import partial
from typing import Optional

import torch
from torch import nn, Tensor
import torch.nn.functional as F

from timm.models.layers import to_2tuple
from .resnet import resnet26d, resnet50d, resnet18d
from .registry import register_model


class HybridEmbed(nn.Module):
    def __init__(self, backbone, img_size=224, patch_size=1, feature_size=None, in_chans=3, embed_dim=768):
        super().__init__()
        assert isinstance(backbone, nn.Module)
        img_size = to_2tuple(img_size)
        patch_size = to_2tuple(patch_size)
        self.img_size = img_size
        self.patch_size = patch_size
        self.backbone = backbone
        if feature_size is None:
            with torch.no_grad():
                training = backbone.training
                if training:
                    backbone.eval()
                o = self.backbone(torch.zeros(1, in_chans, img_size[0], img_size[1]))
                if isinstance(o, (list, tuple)):
                    o = o[-1]  # last feature if backbone outputs list/tuple of features
                feature_size = o.shape[-2:]
                feature_dim = o.shape[1]
                backbone.train(training)
        else:
            feature_size = to_2tuple(feature_size)
            if hasattr(self.backbone, "feature_info"):
                feature_dim = self.backbone.feature_info.channels()[-1]
            else:
                feature_dim = self.backbone.num_features

        self.proj = nn.Conv2d(feature_dim, embed_dim, kernel_size=1, stride=1)

    def forward(self, x):
        x = self.backbone(x)
        if isinstance(x, (list, tuple)):
            x = x[-1]  # last feature if backbone outputs list/tuple of features
        x = self.proj(x)
        global_x = torch.mean(x, [2, 3], keepdim=False)[:, :, None]
        return x, global_x


class PositionEmbeddingSine(nn.Module):
    """
    This is a more standard version of the position embedding, very similar to the one
    used by the Attention is all you need paper, generalized to work on images.
    """

    def __init__(self, num_pos_feats=64, temperature=10000, normalize=False, scale=None):
        super().__init__()
        self.num_pos_feats = num_pos_feats
        self.temperature = temperature
        self.normalize = normalize
        if scale is None:
            scale = 2 * math.pi
        self.scale = scale

    def forward(self, tensor):
        x = tensor
        bs, _, h, w = x.shape
        not_mask = torch.ones((bs, h, w), device=x.device)
        y_embed = not_mask.cumsum(1, dtype=torch.float32)
        x_embed = not_mask.cumsum(2, dtype=torch.float32)
        if self.normalize:
            eps = 1e-6
            y_embed = y_embed / (y_embed[:, -1:, :] + eps) * self.scale
            x_embed = x_embed / (x_embed[:, :, -1:] + eps) * self.scale

        dim_t = torch.arange(self.num_pos_feats, dtype=torch.float32, device=x.device)
        dim_t = self.temperature ** (2 * (dim_t // 2) / self.num_pos_feats)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos = torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)
        return pos


def _get_clones(module, N):
    return nn.ModuleList([copy.deepcopy(module) for i in range(N)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}.")


class TransformerEncoderLayer(nn.Module):
    """DETR-style post-norm encoder layer (own copy, not torch.nn.TransformerEncoderLayer)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=nn.ReLU(), normalize_before=False):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.activation = activation()
        self.normalize_before = normalize_before

    def forward(self, src, src_mask: Optional[Tensor] = None, src_key_padding_mask: Optional[Tensor] = None,
                pos: Optional[Tensor] = None):
        q = k = src + pos if pos is not None else src
        src2 = self.self_attn(q, k, value=src, attn_mask=src_mask, key_padding_mask=src_key_padding_mask)[0]
        src = src + self.dropout1(src2)
        src = self.norm1(src)
        src2 = self.linear2(self.dropout(self.activation(self.linear1(src))))
        src = src + self.dropout2(src2)
        src = self.norm2(src)
        return src


class TransformerDecoderLayer(nn.Module):
    """DETR-style decoder layer (own copy)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=nn.ReLU(), normalize_before=False):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout)
        self.multihead_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout)
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)
        self.dropout3 = nn.Dropout(dropout)
        self.activation = activation()

    def forward(self, tgt, memory, tgt_mask: Optional[Tensor] = None, memory_mask: Optional[Tensor] = None,
                pos: Optional[Tensor] = None, query_pos: Optional[Tensor] = None):
        q = k = tgt + query_pos
        tgt2 = self.self_attn(q, k, value=tgt, attn_mask=tgt_mask)[0]
        tgt = self.norm1(tgt + self.dropout1(tgt2))
        tgt2 = self.multihead_attn(query=tgt + query_pos, key=memory + pos, value=memory, attn_mask=memory_mask)[0]
        tgt = self.norm2(tgt + self.dropout2(tgt2))
        tgt2 = self.linear2(self.dropout(self.activation(self.linear1(tgt))))
        tgt = self.norm3(tgt + self.dropout3(tgt2))
        return tgt


class TransformerEncoder(nn.Module):
    def __init__(self, encoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.norm = norm

    def forward(self, src, mask=None, pos=None):
        output = src
        for layer in self.layers:
            output = layer(output, src_mask=mask, pos=pos)
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(nn.Module):
    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, pos=None, query_pos=None):
        output = tgt
        for layer in self.layers:
            output = layer(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, pos=pos, query_pos=query_pos)
        if self.norm is not None:
            output = self.norm(output)
        return output.unsqueeze(0)


class GRUWaypointsPredictor(nn.Module):
    def __init__(self, input_dim, waypoints=10):
        super().__init__()
        self.gru = torch.nn.GRU(input_size=input_dim, hidden_size=64, batch_first=True)
        self.encoder = nn.Linear(2, 64)
        self.decoder = nn.Linear(64, 2)
        self.waypoints = waypoints

    def forward(self, x, target_point):
        bs = x.shape[0]
        z = self.encoder(target_point).unsqueeze(0)
        output, _ = self.gru(x, z)
        output = output.reshape(bs * self.waypoints, -1)
        output = self.decoder(output).reshape(bs, self.waypoints, 2)
        output = torch.cumsum(output, 1)
        return output


class Interfuser(nn.Module):
    def __init__(self, img_size=224, in_chans=3, embed_dim=768, enc_depth=6, dec_depth=6, dim_feedforward=2048,
                 rgb_backbone_name="r26", lidar_backbone_name="r26", num_heads=8, dropout=0.1,
                 end2end=False, direct_concat=True, separate_view_attention=False, separate_all_attention=False,
                 act_layer=None, weight_init="", freeze_num=-1, with_lidar=False, with_right_left_sensors=True,
                 with_center_sensor=False, traffic_pred_head_type="det", waypoints_pred_head="heatmap",
                 reverse_pos=True, use_view_embed=True, use_mmad_pretrain=None):
        super().__init__()
        self.num_features = self.embed_dim = embed_dim
        act_layer = act_layer or nn.GELU
        self.reverse_pos = reverse_pos
        self.waypoints_pred_head = waypoints_pred_head
        self.with_lidar = with_lidar
        self.with_right_left_sensors = with_right_left_sensors
        self.with_center_sensor = with_center_sensor
        self.separate_view_attention = separate_view_attention
        self.separate_all_attention = separate_all_attention
        self.attn_mask = None

        backbones = {"r50": resnet50d, "r26": resnet26d, "r18": resnet18d}
        self.rgb_backbone = backbones[rgb_backbone_name](pretrained=True, in_chans=in_chans, features_only=True,
                                                         out_indices=[4])
        self.lidar_backbone = backbones[lidar_backbone_name](pretrained=False, in_chans=in_chans,
                                                             features_only=True, out_indices=[4])
        self.rgb_patch_embed = HybridEmbed(backbone=self.rgb_backbone, img_size=img_size, in_chans=in_chans,
                                           embed_dim=embed_dim)
        self.lidar_patch_embed = HybridEmbed(backbone=self.lidar_backbone, img_size=img_size, in_chans=in_chans,
                                             embed_dim=embed_dim)

        self.global_embed = nn.Parameter(torch.zeros(1, embed_dim, 5))
        self.view_embed = nn.Parameter(torch.zeros(1, embed_dim, 5, 1))
        self.query_pos_embed = nn.Parameter(torch.zeros(1, embed_dim, 11))
        self.query_embed = nn.Parameter(torch.zeros(400 + 11, 1, embed_dim))

        self.waypoints_generator = GRUWaypointsPredictor(embed_dim)
        self.junction_pred_head = nn.Linear(embed_dim, 2)
        self.traffic_light_pred_head = nn.Linear(embed_dim, 2)
        self.stop_sign_head = nn.Linear(embed_dim, 2)
        self.traffic_pred_head = nn.Sequential(*[nn.Linear(embed_dim + 32, 64), nn.ReLU(), nn.Linear(64, 7),
                                                 nn.Sigmoid()])
        self.position_encoding = PositionEmbeddingSine(embed_dim // 2, normalize=True)

        encoder_layer = TransformerEncoderLayer(embed_dim, num_heads, dim_feedforward, dropout, act_layer)
        self.encoder = TransformerEncoder(encoder_layer, enc_depth, None)
        decoder_layer = TransformerDecoderLayer(embed_dim, num_heads, dim_feedforward, dropout, act_layer)
        decoder_norm = nn.LayerNorm(embed_dim)
        self.decoder = TransformerDecoder(decoder_layer, dec_depth, decoder_norm)
        self.velocity_fc = nn.Linear(1, 32)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.uniform_(self.global_embed)
        nn.init.uniform_(self.view_embed)
        nn.init.uniform_(self.query_embed)
        nn.init.uniform_(self.query_pos_embed)

    def forward_features(self, front_image, left_image, right_image, front_center_image, lidar, measurements):
        features = []
        # Front view processing
        front_image_token, front_image_token_global = self.rgb_patch_embed(front_image)
        front_image_token = front_image_token + self.view_embed[:, :, 0:1, :] + self.position_encoding(front_image_token)
        front_image_token = front_image_token.flatten(2).permute(2, 0, 1)
        front_image_token_global = (front_image_token_global + self.view_embed[:, :, 0, :]
                                    + self.global_embed[:, :, 0:1]).permute(2, 0, 1)
        features.extend([front_image_token, front_image_token_global])

        if self.with_right_left_sensors:
            for idx, image in ((1, left_image), (2, right_image)):
                token, token_global = self.rgb_patch_embed(image)
                token = token + self.view_embed[:, :, idx:idx + 1, :] + self.position_encoding(token)
                token = token.flatten(2).permute(2, 0, 1)
                token_global = (token_global + self.view_embed[:, :, idx, :]
                                + self.global_embed[:, :, idx:idx + 1]).permute(2, 0, 1)
                features.extend([token, token_global])

        if self.with_lidar:
            lidar_token, lidar_token_global = self.lidar_patch_embed(lidar)
            lidar_token = lidar_token + self.view_embed[:, :, 4:5, :] + self.position_encoding(lidar_token)
            lidar_token = lidar_token.flatten(2).permute(2, 0, 1)
            lidar_token_global = (lidar_token_global + self.view_embed[:, :, 4, :]
                                  + self.global_embed[:, :, 4:5]).permute(2, 0, 1)
            features.extend([lidar_token, lidar_token_global])

        features = torch.cat(features, 0)
        return features

    def generate_square_subsequent_mask(self, sz):
        mask = (torch.triu(torch.ones(sz, sz)) == 1).transpose(0, 1)
        mask = mask.float().masked_fill(mask == 0, float("-inf")).masked_fill(mask == 1, float(0.0))
        return mask

    def forward(self, x):
        front_image = x["rgb"]
        left_image = x["rgb_left"]
        right_image = x["rgb_right"]
        front_center_image = x["rgb_center"]
        measurements = x["measurements"]
        target_point = x["target_point"]
        lidar = x["lidar"]

        features = self.forward_features(front_image, left_image, right_image, front_center_image, lidar,
                                         measurements)

        bs = front_image.shape[0]
        tgt = self.position_encoding(torch.ones((bs, 1, 20, 20), device=x["rgb"].device))
        tgt = tgt.flatten(2)
        tgt = torch.cat([tgt, self.query_pos_embed.repeat(bs, 1, 1)], 2)
        tgt = tgt.permute(2, 0, 1)

        if self.attn_mask is None:
            # waypoint queries may only attend to previous waypoints
            self.attn_mask = self.generate_square_subsequent_mask(tgt.shape[0]).cuda()

        memory = self.encoder(features, mask=None)
        hs = self.decoder(self.query_embed.repeat(1, bs, 1), memory, query_pos=tgt, tgt_mask=self.attn_mask)[0]
        hs = hs.permute(1, 0, 2)  # Batchsize, N, C

        traffic_feature = hs[:, :400]
        is_junction_feature = hs[:, 400]
        traffic_light_state_feature = hs[:, 400]
        stop_sign_feature = hs[:, 400]
        waypoints_feature = hs[:, 401:411]

        waypoints = self.waypoints_generator(waypoints_feature, target_point)

        is_junction = self.junction_pred_head(is_junction_feature)
        traffic_light_state = self.traffic_light_pred_head(traffic_light_state_feature)
        stop_sign = self.stop_sign_head(stop_sign_feature)

        velocity = measurements[:, 6:7].unsqueeze(-1).type(torch.cuda.FloatTensor)
        velocity = velocity.repeat(1, 400, 32)
        traffic_feature_with_vel = torch.cat([traffic_feature, velocity], dim=2)
        traffic = self.traffic_pred_head(traffic_feature_with_vel)
        return traffic, waypoints, is_junction, traffic_light_state, stop_sign, traffic_feature


@register_model
def interfuser_baseline(**kwargs):
    model = Interfuser(enc_depth=6, dec_depth=6, embed_dim=256, rgb_backbone_name="r50", lidar_backbone_name="r18",
                       waypoints_pred_head="gru", with_lidar=True)
    return model


@register_model
def interfuser_no_lidar(**kwargs):
    model = Interfuser(enc_depth=6, dec_depth=6, embed_dim=256, rgb_backbone_name="r50", lidar_backbone_name="r18",
                       waypoints_pred_head="gru", with_lidar=False)
    return model
