#!/usr/bin/env python3
"""DELG model: ResNet backbone with a GeM/ArcFace global head and an attention-based local head
(Cao et al., "Unifying Deep Local and Global Features for Image Search", ECCV 2020)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from core.config import cfg
from model.resnet import ResNet, ResHead


class GeneralizedMeanPooling(nn.Module):
    """Applies a 2D power-average adaptive pooling over an input signal composed of several input planes."""

    def __init__(self, norm=3.0, output_size=1, eps=1e-6):
        super(GeneralizedMeanPooling, self).__init__()
        assert norm > 0
        self.p = float(norm)
        self.output_size = output_size
        self.eps = eps

    def forward(self, x):
        x = x.clamp(min=self.eps).pow(self.p)
        return F.adaptive_avg_pool2d(x, self.output_size).pow(1. / self.p)

    def __repr__(self):
        return self.__class__.__name__ + '(' \
               + str(self.p) + ', ' \
               + 'output_size=' + str(self.output_size) + ')'


class GeneralizedMeanPoolingP(GeneralizedMeanPooling):
    """Same, but norm is trainable"""

    def __init__(self, norm=3, output_size=1, eps=1e-6):
        super(GeneralizedMeanPoolingP, self).__init__(norm, output_size, eps)
        self.p = nn.Parameter(torch.ones(1) * norm)


class GlobalHead(nn.Module):
    def __init__(self, w_in, nc, pp=3):
        super(GlobalHead, self).__init__()
        self.pool = GeneralizedMeanPoolingP(norm=pp)
        self.fc = nn.Linear(w_in, nc, bias=True)

    def forward(self, x):
        x = self.pool(x)
        x = x.view(x.size(0), -1)
        x = self.fc(x)
        return x


class SpatialAttention2d(nn.Module):
    """SpatialAttention2d: 2-layer 1x1 conv network with softplus activation."""

    def __init__(self, in_c, act_fn='relu'):
        super(SpatialAttention2d, self).__init__()
        self.conv1 = nn.Conv2d(in_c, cfg.MODEL.S4.ATTENTION_DIM, 1, 1)
        self.bn = nn.BatchNorm2d(cfg.MODEL.S4.ATTENTION_DIM, eps=cfg.BN.EPS, momentum=cfg.BN.MOM)
        if act_fn.lower() in ['relu']:
            self.act1 = nn.ReLU()
        elif act_fn.lower() in ['leakyrelu', 'leaky', 'leaky_relu']:
            self.act1 = nn.LeakyReLU()
        self.conv2 = nn.Conv2d(cfg.MODEL.S4.ATTENTION_DIM, 1, 1, 1)
        self.softplus = nn.Softplus(beta=1, threshold=20)  # use default setting.

        for conv in [self.conv1, self.conv2]:
            conv.apply(init_weights)

    def forward(self, x):
        """
        x : spatial feature map. (b x c x w x h)
        att : softplus attention score
        """
        x = self.conv1(x)
        x = self.bn(x)
        feature_map_norm = F.normalize(x, p=2, dim=1)
        x = self.act1(x)
        x = self.conv2(x)
        att_score = self.softplus(x)
        att = att_score.expand_as(feature_map_norm)
        x = att * feature_map_norm
        return x, att_score

    def __repr__(self):
        return self.__class__.__name__


class Autoencoder(nn.Module):
    """Dimensionality reduction of local features (1024 -> 128 -> 1024)."""

    def __init__(self, in_c):
        super(Autoencoder, self).__init__()
        self.encoder = nn.Conv2d(in_c, cfg.MODEL.S4.AUTOENCODER_DIM, 1, 1)
        self.decoder = nn.Conv2d(cfg.MODEL.S4.AUTOENCODER_DIM, in_c, 1, 1)

    def forward(self, x):
        reduced = self.encoder(x)
        rec = F.relu(self.decoder(reduced))
        return reduced, rec


def init_weights(m):
    if type(m) == nn.Linear or type(m) == nn.Conv2d:
        nn.init.xavier_uniform_(m.weight)
        if m.bias is not None:
            m.bias.data.fill_(0.01)


class Arcface(nn.Module):
    """ArcFace head: additive angular margin on normalised global descriptors.

    The one-hot buffer is built directly on the GPU to avoid a host->device copy per step.
    """

    def __init__(self, in_feat, num_classes):
        super().__init__()
        self.in_feat = in_feat
        self._num_classes = num_classes
        self._s = cfg.MODEL.HEADS.SCALE
        self._m = cfg.MODEL.HEADS.MARGIN

        self.cos_m = math.cos(self._m)
        self.sin_m = math.sin(self._m)
        self.threshold = math.cos(math.pi - self._m)
        self.mm = math.sin(math.pi - self._m) * self._m

        self.weight = nn.Parameter(torch.Tensor(num_classes, in_feat))
        nn.init.xavier_uniform_(self.weight)
        self.register_buffer('t', torch.zeros(1))

    def forward(self, features, targets):
        # get cos(theta)
        cos_theta = F.linear(F.normalize(features), F.normalize(self.weight))
        cos_theta = cos_theta.clamp(-1, 1)  # for numerical stability

        target_logit = cos_theta[torch.arange(0, features.size(0)), targets].view(-1, 1)

        sin_theta = torch.sqrt(1.0 - torch.pow(target_logit, 2))
        cos_theta_m = target_logit * self.cos_m - sin_theta * self.sin_m  # cos(target+margin)
        mask = cos_theta > cos_theta_m
        final_target_logit = torch.where(target_logit > self.threshold, cos_theta_m, target_logit - self.mm)

        hard_example = cos_theta[mask]
        with torch.no_grad():
            self.t = target_logit.mean() * 0.01 + (1 - 0.01) * self.t
        cos_theta[mask] = hard_example * (self.t + hard_example)
        cos_theta.scatter_(1, targets.view(-1, 1).long(), final_target_logit)
        pred_class_logits = cos_theta * self._s
        return pred_class_logits


class ArcMarginProduct(nn.Module):
    """Classic ArcFace implementation (kept for the v1 checkpoints trained before the switch to Arcface)."""

    def __init__(self, in_features, out_features, s=30.0, m=0.50, easy_margin=False):
        super(ArcMarginProduct, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.s = s
        self.m = m
        self.weight = nn.Parameter(torch.FloatTensor(out_features, in_features))
        nn.init.xavier_uniform_(self.weight)

        self.easy_margin = easy_margin
        self.cos_m = math.cos(m)
        self.sin_m = math.sin(m)
        self.th = math.cos(math.pi - m)
        self.mm = math.sin(math.pi - m) * m

    def forward(self, input, label):
        cosine = F.linear(F.normalize(input), F.normalize(self.weight))
        sine = torch.sqrt((1.0 - torch.pow(cosine, 2)).clamp(0, 1))
        phi = cosine * self.cos_m - sine * self.sin_m
        if self.easy_margin:
            phi = torch.where(cosine > 0, phi, cosine)
        else:
            phi = torch.where(cosine > self.th, phi, cosine - self.mm)
        one_hot = torch.zeros(cosine.size(), device='cuda')
        one_hot.scatter_(1, label.view(-1, 1).long(), 1)
        output = (one_hot * phi) + ((1.0 - one_hot) * cosine)
        output *= self.s
        return output


class DelgExtraction(nn.Module):
    """Shared backbone, global GeM+whitening head and attention/autoencoder local head."""

    def __init__(self):
        super(DelgExtraction, self).__init__()
        self.globalmodel = ResNet()
        self.desc_cls = Arcface(cfg.MODEL.HEADS.REDUCTION_DIM, cfg.MODEL.NUM_CLASSES)
        self.localmodel = SpatialAttention2d(1024)
        self.autoencoder = Autoencoder(1024)
        self.att_cls = ResHead(cfg.MODEL.S4.AUTOENCODER_DIM, cfg.MODEL.NUM_CLASSES)

    def forward(self, x, targets):
        global_feature, feamap = self.globalmodel(x)
        global_logits = self.desc_cls(global_feature, targets)

        # stop gradients from the local branch into the backbone
        block3 = feamap.detach()
        reduced, rec = self.autoencoder(block3)
        rec_loss = F.mse_loss(rec, block3)
        local_feature, att_score = self.localmodel(reduced if reduced.size(1) == 1024 else rec)
        local_logits = self.att_cls(local_feature)
        return global_logits, local_logits, rec_loss, att_score


class Delg(nn.Module):
    def __init__(self):
        super(Delg, self).__init__()
        self.delg = DelgExtraction()

    def forward(self, x, targets=None):
        if targets is None:
            # inference: a dummy label keeps the margin head happy
            targets = torch.zeros(x.size(0), dtype=torch.long, device=x.device)
        return self.delg(x, targets)
