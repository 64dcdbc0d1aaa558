# -*- coding: utf-8 -*-
# SCTransNet: Spatial-channel Cross Transformer Network for Infrared Small Target Detection
import copy
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import Dropout, Softmax, Conv2d, LayerNorm
from torch.nn.modules.utils import _pair

from . import Config as config


class Channel_Embeddings(nn.Module):
    def __init__(self, config, patchsize, img_size, in_channels):
        super().__init__()
        img_size = _pair(img_size)
        patch_size = _pair(patchsize)
        n_patches = (img_size[0] // patch_size[0]) * (img_size[1] // patch_size[1])

        self.patch_embeddings = nn.Sequential(
            nn.MaxPool2d(kernel_size=5, stride=5),
            Conv2d(in_channels=in_channels,
                   out_channels=in_channels,
                   kernel_size=patchsize // 5,
                   stride=patchsize // 5)
        )

        self.dropout = Dropout(config.transformer["embeddings_dropout_rate"])

    def forward(self, x):
        if x is None:
            return None
        x = self.patch_embeddings(x)
        return x


class Reconstruct(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
        super(Reconstruct, self).__init__()
        if kernel_size == 3:
            padding = 1
        else:
            padding = 0
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=kernel_size, padding=padding)
        self.norm = nn.BatchNorm2d(out_channels)
        self.activation = nn.ReLU(inplace=True)
        self.scale_factor = scale_factor

    def forward(self, x):
        if x is None:
            return None

        x = nn.Upsample(scale_factor=self.scale_factor, mode='bilinear')(x)

        out = self.conv(x)
        out = self.norm(out)
        out = self.activation(out)
        return out


class Attention_org(nn.Module):
    """Spatial-embedded Single-head Channel-cross Attention (SSCA)."""
    def __init__(self, config, vis, channel_num):
        super(Attention_org, self).__init__()
        self.vis = vis
        self.KV_size = config.KV_size
        self.channel_num = channel_num
        self.num_attention_heads = config.transformer["num_heads"]

        self.query1 = nn.Conv2d(channel_num[0], channel_num[0], kernel_size=1, stride=1, bias=False)
        self.query2 = nn.Conv2d(channel_num[1], channel_num[1], kernel_size=1, stride=1, bias=False)
        self.query3 = nn.Conv2d(channel_num[2], channel_num[2], kernel_size=1, stride=1, bias=False)
        self.query4 = nn.Conv2d(channel_num[3], channel_num[3], kernel_size=1, stride=1, bias=False)
        self.key = nn.Conv2d(self.KV_size, self.KV_size, kernel_size=1, stride=1, bias=False)
        self.value = nn.Conv2d(self.KV_size, self.KV_size, kernel_size=1, stride=1, bias=False)

        self.q1_dw = nn.Conv2d(channel_num[0], channel_num[0], 3, 1, 1, groups=channel_num[0], bias=False)
        self.q2_dw = nn.Conv2d(channel_num[1], channel_num[1], 3, 1, 1, groups=channel_num[1], bias=False)
        self.q3_dw = nn.Conv2d(channel_num[2], channel_num[2], 3, 1, 1, groups=channel_num[2], bias=False)
        self.q4_dw = nn.Conv2d(channel_num[3], channel_num[3], 3, 1, 1, groups=channel_num[3], bias=False)
        self.k_dw = nn.Conv2d(self.KV_size, self.KV_size, 3, 1, 1, groups=self.KV_size, bias=False)
        self.v_dw = nn.Conv2d(self.KV_size, self.KV_size, 3, 1, 1, groups=self.KV_size, bias=False)

        self.psi = nn.InstanceNorm2d(self.num_attention_heads)
        self.softmax = Softmax(dim=3)

        self.out1 = nn.Conv2d(channel_num[0], channel_num[0], kernel_size=1, stride=1, bias=False)
        self.out2 = nn.Conv2d(channel_num[1], channel_num[1], kernel_size=1, stride=1, bias=False)
        self.out3 = nn.Conv2d(channel_num[2], channel_num[2], kernel_size=1, stride=1, bias=False)
        self.out4 = nn.Conv2d(channel_num[3], channel_num[3], kernel_size=1, stride=1, bias=False)
        self.attn_dropout = Dropout(config.transformer["attention_dropout_rate"])
        self.proj_dropout = Dropout(config.transformer["attention_dropout_rate"])

        self.temperature = nn.Parameter(torch.ones(1, 1, 1))

    def _attend(self, q, k, v):
        b, c, h, w = q.shape
        q = q.reshape(b, c, h * w)
        q = F.normalize(q, dim=-1)
        attn = (q @ k.transpose(-2, -1)) * self.temperature
        attn = self.psi(attn.unsqueeze(1)).squeeze(1)
        attn = self.softmax(attn.unsqueeze(1)).squeeze(1)
        attn = self.attn_dropout(attn)
        out = attn @ v
        return out.reshape(b, -1, h, w)

    def forward(self, emb1, emb2, emb3, emb4, emb_all):
        b, c, h, w = emb1.shape
        q1 = self.q1_dw(self.query1(emb1))
        q2 = self.q2_dw(self.query2(emb2))
        q3 = self.q3_dw(self.query3(emb3))
        q4 = self.q4_dw(self.query4(emb4))
        k = self.k_dw(self.key(emb_all))
        v = self.v_dw(self.value(emb_all))

        k = F.normalize(k.reshape(b, self.KV_size, h * w), dim=-1)
        v = v.reshape(b, self.KV_size, h * w)

        out1 = self._attend(q1, k, v) if emb1 is not None else None
        out2 = self._attend(q2, k, v) if emb2 is not None else None
        out3 = self._attend(q3, k, v) if emb3 is not None else None
        out4 = self._attend(q4, k, v) if emb4 is not None else None

        # project back from KV_size to the per-level channel number
        out1 = self.out1(out1[:, :self.channel_num[0]])
        out2 = self.out2(out2[:, :self.channel_num[1]])
        out3 = self.out3(out3[:, :self.channel_num[2]])
        out4 = self.out4(out4[:, :self.channel_num[3]])
        weights = None
        return out1, out2, out3, out4, weights


class LayerNorm3d(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.norm = nn.LayerNorm(dim, eps=eps)

    def forward(self, x):
        b, c, h, w = x.shape
        x = x.permute(0, 2, 3, 1)
        x = self.norm(x)
        return x.permute(0, 3, 1, 2).contiguous()


class eca_layer_2d(nn.Module):
    def __init__(self, channel, k_size=3):
        super(eca_layer_2d, self).__init__()
        padding = k_size // 2
        self.avg_pool = nn.AdaptiveAvgPool2d(output_size=1)
        self.conv = nn.Sequential(
            nn.Conv1d(in_channels=1, out_channels=1, kernel_size=k_size, padding=padding, bias=False),
            nn.Sigmoid()
        )
        self.channel = channel
        self.k_size = k_size

    def forward(self, x):
        out = self.avg_pool(x)
        out = out.view(x.size(0), 1, x.size(1))
        out = self.conv(out)
        out = out.view(x.size(0), x.size(1), 1, 1)
        return out * x


class CFN(nn.Module):
    """Complementary feed-forward network: depth-wise conv branches + ECA."""
    def __init__(self, dim, ffn_expansion_factor=2.66, bias=False):
        super(CFN, self).__init__()
        hidden_features = int(dim * ffn_expansion_factor)
        self.project_in = nn.Conv2d(dim, hidden_features * 2, kernel_size=1, bias=bias)
        self.dwconv3x3 = nn.Conv2d(hidden_features * 2, hidden_features * 2, kernel_size=3, stride=1,
                                   padding=1, groups=hidden_features * 2, bias=bias)
        self.dwconv5x5 = nn.Conv2d(hidden_features * 2, hidden_features * 2, kernel_size=5, stride=1,
                                   padding=2, groups=hidden_features * 2, bias=bias)
        self.relu3 = nn.ReLU()
        self.relu5 = nn.ReLU()
        self.eca = eca_layer_2d(hidden_features * 2)
        self.project_out = nn.Conv2d(hidden_features * 2, dim, kernel_size=1, bias=bias)

    def forward(self, x):
        x = self.project_in(x)
        x3 = self.relu3(self.dwconv3x3(x))
        x5 = self.relu5(self.dwconv5x5(x))
        x = self.eca(x3 + x5)
        x = self.project_out(x)
        return x


class Block_ViT(nn.Module):
    def __init__(self, config, vis, channel_num):
        super(Block_ViT, self).__init__()
        self.attn_norm1 = LayerNorm3d(channel_num[0])
        self.attn_norm2 = LayerNorm3d(channel_num[1])
        self.attn_norm3 = LayerNorm3d(channel_num[2])
        self.attn_norm4 = LayerNorm3d(channel_num[3])
        self.attn_norm = LayerNorm3d(config.KV_size)

        self.channel_attn = Attention_org(config, vis, channel_num)

        self.ffn_norm1 = LayerNorm3d(channel_num[0])
        self.ffn_norm2 = LayerNorm3d(channel_num[1])
        self.ffn_norm3 = LayerNorm3d(channel_num[2])
        self.ffn_norm4 = LayerNorm3d(channel_num[3])
        self.ffn1 = CFN(channel_num[0])
        self.ffn2 = CFN(channel_num[1])
        self.ffn3 = CFN(channel_num[2])
        self.ffn4 = CFN(channel_num[3])

    def forward(self, emb1, emb2, emb3, emb4):
        embcat = torch.cat([emb1, emb2, emb3, emb4], dim=1)
        org1, org2, org3, org4 = emb1, emb2, emb3, emb4
        cx1 = self.attn_norm1(emb1)
        cx2 = self.attn_norm2(emb2)
        cx3 = self.attn_norm3(emb3)
        cx4 = self.attn_norm4(emb4)
        emb_all = self.attn_norm(embcat)
        cx1, cx2, cx3, cx4, weights = self.channel_attn(cx1, cx2, cx3, cx4, emb_all)
        cx1 = org1 + cx1
        cx2 = org2 + cx2
        cx3 = org3 + cx3
        cx4 = org4 + cx4

        org1, org2, org3, org4 = cx1, cx2, cx3, cx4
        x1 = self.ffn1(self.ffn_norm1(cx1)) + org1
        x2 = self.ffn2(self.ffn_norm2(cx2)) + org2
        x3 = self.ffn3(self.ffn_norm3(cx3)) + org3
        x4 = self.ffn4(self.ffn_norm4(cx4)) + org4
        return x1, x2, x3, x4, weights


class Encoder(nn.Module):
    def __init__(self, config, vis, channel_num):
        super(Encoder, self).__init__()
        self.vis = vis
        self.layer = nn.ModuleList()
        self.encoder_norm1 = LayerNorm3d(channel_num[0])
        self.encoder_norm2 = LayerNorm3d(channel_num[1])
        self.encoder_norm3 = LayerNorm3d(channel_num[2])
        self.encoder_norm4 = LayerNorm3d(channel_num[3])
        for _ in range(config.transformer["num_layers"]):
            layer = Block_ViT(config, vis, channel_num)
            self.layer.append(copy.deepcopy(layer))

    def forward(self, emb1, emb2, emb3, emb4):
        attn_weights = []
        for layer_block in self.layer:
            emb1, emb2, emb3, emb4, weights = layer_block(emb1, emb2, emb3, emb4)
            if self.vis:
                attn_weights.append(weights)
        emb1 = self.encoder_norm1(emb1)
        emb2 = self.encoder_norm2(emb2)
        emb3 = self.encoder_norm3(emb3)
        emb4 = self.encoder_norm4(emb4)
        return emb1, emb2, emb3, emb4, attn_weights


class ChannelTransformer(nn.Module):
    def __init__(self, config, vis, img_size, channel_num=[64, 128, 256, 512], patchSize=[32, 16, 8, 4]):
        super().__init__()

        self.patchSize_1 = patchSize[0]
        self.patchSize_2 = patchSize[1]
        self.patchSize_3 = patchSize[2]
        self.patchSize_4 = patchSize[3]
        self.embeddings_1 = Channel_Embeddings(config, self.patchSize_1, img_size=img_size, in_channels=channel_num[0])
        self.embeddings_2 = Channel_Embeddings(config, self.patchSize_2, img_size=img_size // 2, in_channels=channel_num[1])
        self.embeddings_3 = Channel_Embeddings(config, self.patchSize_3, img_size=img_size // 4, in_channels=channel_num[2])
        self.embeddings_4 = Channel_Embeddings(config, self.patchSize_4, img_size=img_size // 8, in_channels=channel_num[3])
        self.encoder = Encoder(config, vis, channel_num)

        self.reconstruct_1 = Reconstruct(channel_num[0], channel_num[0], kernel_size=1, scale_factor=(self.patchSize_1, self.patchSize_1))
        self.reconstruct_2 = Reconstruct(channel_num[1], channel_num[1], kernel_size=1, scale_factor=(self.patchSize_2, self.patchSize_2))
        self.reconstruct_3 = Reconstruct(channel_num[2], channel_num[2], kernel_size=1, scale_factor=(self.patchSize_3, self.patchSize_3))
        self.reconstruct_4 = Reconstruct(channel_num[3], channel_num[3], kernel_size=1, scale_factor=(self.patchSize_4, self.patchSize_4))

    def forward(self, en1, en2, en3, en4):
        emb1 = self.embeddings_1(en1)
        emb2 = self.embeddings_2(en2)
        emb3 = self.embeddings_3(en3)
        emb4 = self.embeddings_4(en4)

        encoded1, encoded2, encoded3, encoded4, attn_weights = self.encoder(emb1, emb2, emb3, emb4)

        x1 = self.reconstruct_1(encoded1) if en1 is not None else None
        x2 = self.reconstruct_2(encoded2) if en2 is not None else None
        x3 = self.reconstruct_3(encoded3) if en3 is not None else None
        x4 = self.reconstruct_4(encoded4) if en4 is not None else None

        x1 = x1 + en1 if en1 is not None else None
        x2 = x2 + en2 if en2 is not None else None
        x3 = x3 + en3 if en3 is not None else None
        x4 = x4 + en4 if en4 is not None else None

        return x1, x2, x3, x4, attn_weights


class Res_block(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1):
        super(Res_block, self).__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.relu = nn.LeakyReLU(inplace=True)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1)
        self.bn2 = nn.BatchNorm2d(out_channels)
        if stride != 1 or out_channels != in_channels:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=stride),
                nn.BatchNorm2d(out_channels))
        else:
            self.shortcut = None

    def forward(self, x):
        residual = x
        if self.shortcut is not None:
            residual = self.shortcut(x)
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out += residual
        out = self.relu(out)
        return out


class UpBlock_attention(nn.Module):
    def __init__(self, in_channels, out_channels, nb_Conv, activation='ReLU'):
        super().__init__()
        self.up = nn.Upsample(scale_factor=2)
        self.coatt = CCA(F_g=in_channels // 2, F_x=in_channels // 2)
        self.nConvs = _make_nConv(in_channels, out_channels, nb_Conv, activation)

    def forward(self, x, skip_x):
        up = self.up(x)
        skip_x_att = self.coatt(g=up, x=skip_x)
        x = torch.cat([skip_x_att, up], dim=1)
        return self.nConvs(x)


class CCA(nn.Module):
    def __init__(self, F_g, F_x):
        super().__init__()
        self.mlp_x = nn.Sequential(nn.Flatten(), nn.Linear(F_x, F_x))
        self.mlp_g = nn.Sequential(nn.Flatten(), nn.Linear(F_g, F_x))
        self.relu = nn.ReLU(inplace=True)

    def forward(self, g, x):
        avg_pool_x = F.avg_pool2d(x, (x.size(2), x.size(3)), stride=(x.size(2), x.size(3)))
        channel_att_x = self.mlp_x(avg_pool_x)
        avg_pool_g = F.avg_pool2d(g, (g.size(2), g.size(3)), stride=(g.size(2), g.size(3)))
        channel_att_g = self.mlp_g(avg_pool_g)
        channel_att_sum = (channel_att_x + channel_att_g) / 2.0
        scale = torch.sigmoid(channel_att_sum).unsqueeze(2).unsqueeze(3).expand_as(x)
        x_after_channel = x * scale
        out = self.relu(x_after_channel)
        return out


def _make_nConv(in_channels, out_channels, nb_Conv, activation='ReLU'):
    layers = [Res_block(in_channels, out_channels)]
    for _ in range(nb_Conv - 1):
        layers.append(Res_block(out_channels, out_channels))
    return nn.Sequential(*layers)


class SCTransNet(nn.Module):
    def __init__(self, config, n_channels=1, n_classes=1, img_size=256, vis=False, mode='train', deepsuper=True):
        super().__init__()
        self.vis = vis
        self.deepsuper = deepsuper
        self.mode = mode
        self.n_channels = n_channels
        self.n_classes = n_classes
        in_channels = config.base_channel  # 32
        block = Res_block
        self.pool = nn.MaxPool2d(2, 2)
        self.inc = self._make_layer(block, n_channels, in_channels)
        self.down_encoder1 = self._make_layer(block, in_channels, in_channels * 2, 1)
        self.down_encoder2 = self._make_layer(block, in_channels * 2, in_channels * 4, 1)
        self.down_encoder3 = self._make_layer(block, in_channels * 4, in_channels * 8, 1)
        self.down_encoder4 = self._make_layer(block, in_channels * 8, in_channels * 8, 1)
        self.mtc = ChannelTransformer(config, vis, img_size,
                                      channel_num=[in_channels, in_channels * 2, in_channels * 4, in_channels * 8],
                                      patchSize=config.patch_sizes)
        self.up_decoder4 = UpBlock_attention(in_channels * 16, in_channels * 4, nb_Conv=2)
        self.up_decoder3 = UpBlock_attention(in_channels * 8, in_channels * 2, nb_Conv=2)
        self.up_decoder2 = UpBlock_attention(in_channels * 4, in_channels, nb_Conv=2)
        self.up_decoder1 = UpBlock_attention(in_channels * 2, in_channels, nb_Conv=2)
        self.outc = nn.Conv2d(in_channels, n_classes, kernel_size=(1, 1), stride=(1, 1))

        if self.deepsuper:
            self.gt_conv5 = nn.Sequential(nn.Conv2d(in_channels * 8, 1, 1))
            self.gt_conv4 = nn.Sequential(nn.Conv2d(in_channels * 4, 1, 1))
            self.gt_conv3 = nn.Sequential(nn.Conv2d(in_channels * 2, 1, 1))
            self.gt_conv2 = nn.Sequential(nn.Conv2d(in_channels * 1, 1, 1))
            self.outconv = nn.Conv2d(5 * 1, 1, 1)

    def _make_layer(self, block, input_channels, output_channels, num_blocks=1):
        layers = []
        layers.append(block(input_channels, output_channels))
        for i in range(num_blocks - 1):
            layers.append(block(output_channels, output_channels))
        return nn.Sequential(*layers)

    def forward(self, x):
        x1 = self.inc(x)  # 64 256 256
        x2 = self.down_encoder1(self.pool(x1))  # 128 128 128
        x3 = self.down_encoder2(self.pool(x2))  # 256 64  64
        x4 = self.down_encoder3(self.pool(x3))  # 512 32  32
        d5 = self.down_encoder4(self.pool(x4))  # 512 16  16

        #  CCT
        f1 = x1
        f2 = x2
        f3 = x3
        f4 = x4
        #  CCT
        x1, x2, x3, x4, att_weights = self.mtc(x1, x2, x3, x4)
        x1 = x1 + f1
        x2 = x2 + f2
        x3 = x3 + f3
        x4 = x4 + f4
        #  Feature fusion
        d4 = self.up_decoder4(d5, x4)
        d3 = self.up_decoder3(d4, x3)
        d2 = self.up_decoder2(d3, x2)
        out = self.outc(self.up_decoder1(d2, x1))
        # deep supervision
        if self.deepsuper:
            gt_5 = self.gt_conv5(d5)
            gt_4 = self.gt_conv4(d4)
            gt_3 = self.gt_conv3(d3)
            gt_2 = self.gt_conv2(d2)
            # 原始深监督
            gt5 = F.interpolate(gt_5, scale_factor=16, mode='bilinear', align_corners=True)
            gt4 = F.interpolate(gt_4, scale_factor=8, mode='bilinear', align_corners=True)
            gt3 = F.interpolate(gt_3, scale_factor=4, mode='bilinear', align_corners=True)
            gt2 = F.interpolate(gt_2, scale_factor=2, mode='bilinear', align_corners=True)
            d0 = self.outconv(torch.cat((gt2, gt3, gt4, gt5, out), 1))

            if self.mode == 'train':
                return (torch.sigmoid(gt5), torch.sigmoid(gt4), torch.sigmoid(gt3), torch.sigmoid(gt2),
                        torch.sigmoid(d0), torch.sigmoid(out))
            else:
                return torch.sigmoid(out)
        else:
            return torch.sigmoid(out)


if __name__ == '__main__':
    from thop import profile
    config_vit = config.get_SCTrans_config()
    model = SCTransNet(config_vit, mode='train', deepsuper=True)
    model = model.cuda()
    inputs = torch.rand(1, 1, 256, 256).cuda()
    output = model(inputs)
    flops, params = profile(model, (inputs,))

    print('-' * 50)
    print('FLOPs = ' + str(flops / 1000 ** 3) + ' G')
    print('Params = ' + str(params / 1000 ** 2) + ' M')
