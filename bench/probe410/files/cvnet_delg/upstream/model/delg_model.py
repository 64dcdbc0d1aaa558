#!/usr/bin/env python3
"""DELG-style model: ResNet backbone with a global (GeM + whitening + CurricularFace)
head and a local (attention + autoencoder) head, following
"Unifying Deep Local and Global Features for Image Search" (Cao et al., ECCV 2020).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from model.resnet import ResNet, ResHead


class GeneralizedMeanPooling(nn.Module):
    r"""Applies a 2D power-average adaptive pooling over an input signal composed of several input planes.
    The function computed is: :math:`f(X) = pow(sum(pow(X, p)), 1/p)`
        - At p = infinity, one gets Max Pooling
        - At p = 1, one gets Average Pooling
    The output is of size H x W, for any input size.
    """

    def __init__(self, norm, output_size=1, eps=1e-6):
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
    """ Same, but norm is trainable
    """

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
    """SpatialAttention2d: 1x1 conv -> BN -> ReLU -> 1x1 conv -> softplus."""

    def __init__(self, in_c, act_fn='relu', with_aspp=False):
        super(SpatialAttention2d, self).__init__()
        self.conv1 = nn.Conv2d(in_c, 512, 1, 1)
        self.bn = nn.BatchNorm2d(512, eps=1e-5, momentum=0.1)
        if act_fn.lower() in ['relu']:
            self.act1 = nn.ReLU()
        elif act_fn.lower() in ['leakyrelu', 'leaky', 'leaky_relu']:
            self.act1 = nn.LeakyReLU()
        self.conv2 = nn.Conv2d(512, 1, 1, 1)
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
    """Reduces the local descriptors to REDUCTION_DIM and reconstructs them."""

    def __init__(self, in_c, reduced_c):
        super(Autoencoder, self).__init__()
        self.encoder = nn.Conv2d(in_c, reduced_c, 1, 1)
        self.decoder = nn.Conv2d(reduced_c, in_c, 1, 1)

    def forward(self, x):
        reduced = self.encoder(x)
        reconstructed = F.relu(self.decoder(reduced))
        return reduced, reconstructed


class CurricularFace(nn.Module):
    """CurricularFace margin head (adaptive curriculum learning loss for face recognition)."""

    def __init__(self, in_features, out_features, m=0.15, s=30.):
        super(CurricularFace, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.m = m
        self.s = s
        self.cos_m = math.cos(m)
        self.sin_m = math.sin(m)
        self.threshold = math.cos(math.pi - m)
        self.mm = math.sin(math.pi - m) * m
        self.kernel = nn.Parameter(torch.Tensor(in_features, out_features))
        self.register_buffer('t', torch.zeros(1))
        nn.init.normal_(self.kernel, std=0.01)

    def forward(self, embeddings, label):
        embeddings = F.normalize(embeddings, dim=1)
        kernel_norm = F.normalize(self.kernel, dim=0)
        cos_theta = torch.mm(embeddings, kernel_norm)
        cos_theta = cos_theta.clamp(-1, 1)  # for numerical stability
        with torch.no_grad():
            origin_cos = cos_theta.clone()
        target_logit = cos_theta[torch.arange(0, embeddings.size(0)), label].view(-1, 1)

        sin_theta = torch.sqrt(1.0 - torch.pow(target_logit, 2))
        cos_theta_m = target_logit * self.cos_m - sin_theta * self.sin_m  # cos(target+margin)
        mask = cos_theta > cos_theta_m
        final_target_logit = torch.where(target_logit > self.threshold, cos_theta_m, target_logit - self.mm)

        hard_example = cos_theta[mask]
        with torch.no_grad():
            self.t = target_logit.mean() * 0.01 + (1 - 0.01) * self.t
        cos_theta[mask] = hard_example * (self.t + hard_example)
        cos_theta.scatter_(1, label.view(-1, 1).long(), final_target_logit)
        output = cos_theta * self.s
        return output, origin_cos * self.s


def init_weights(m):
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
        if m.bias is not None:
            nn.init.constant_(m.bias, 0)
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.constant_(m.weight, 1)
        nn.init.constant_(m.bias, 0)


class DELG(nn.Module):
    """ DELG model """

    def __init__(self, RESNET_DEPTH, REDUCTION_DIM, NUM_CLASSES, LOCAL_DIM=128):
        super(DELG, self).__init__()
        self.globalmodel = ResNet(RESNET_DEPTH, REDUCTION_DIM)
        self.localmodel = SpatialAttention2d(1024)
        self.autoencoder = Autoencoder(1024, LOCAL_DIM)
        self.att_classifier = nn.Linear(1024, NUM_CLASSES)
        self.desc_cls = CurricularFace(REDUCTION_DIM, NUM_CLASSES)

    def forward(self, x, targets):
        global_feature, feamap = self.globalmodel(x)
        # stop the gradient from the local branch into the backbone
        block3 = feamap.detach()
        local_feature, att_score = self.localmodel(block3)
        reduced, reconstructed = self.autoencoder(block3)
        recon_loss = F.mse_loss(reconstructed, block3)

        local_logits = self.att_classifier(F.adaptive_avg_pool2d(local_feature, 1).flatten(1))
        global_logits, _ = self.desc_cls(global_feature, targets)
        return global_logits, local_logits, 10.0 * recon_loss

    @torch.no_grad()
    def extract_global_descriptor(self, x):
        global_feature, _ = self.globalmodel(x)
        return global_feature

    @torch.no_grad()
    def extract_local_descriptors(self, x, max_keypoints=1000):
        """Returns the top-scoring local descriptors (reduced dim) and their attention scores."""
        _, feamap = self.globalmodel(x)
        _, att_score = self.localmodel(feamap)
        reduced, _ = self.autoencoder(feamap)
        b, c, h, w = reduced.shape
        scores = att_score.view(b, -1)
        k = min(max_keypoints, scores.shape[1])
        top_scores, top_idx = torch.topk(scores, k, dim=1)
        descs = reduced.view(b, c, -1).gather(2, top_idx.unsqueeze(1).expand(-1, c, -1))
        descs = F.normalize(descs.transpose(1, 2), dim=-1)
        ys = torch.div(top_idx, w, rounding_mode='floor')
        xs = top_idx % w
        return descs, top_scores, torch.stack([xs, ys], dim=-1)
