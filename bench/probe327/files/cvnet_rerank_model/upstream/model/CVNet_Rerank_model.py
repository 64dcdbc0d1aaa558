#!/usr/bin/env python3
# written by Seongwon Lee (won4113@yonsei.ac.kr)

from functools import reduce
from operator import add

import torch
import torch.nn as nn
import torch.nn.functional as F

from model.resnet import ResNet, ResHead
from model.CVlearner import CVLearner


def extract_feat_res_pycls(img, backbone, feat_ids, bottleneck_ids, lids):
    r""" Extract intermediate features from ResNet"""
    feats = []

    # Layer 0
    feat = backbone.stem(img)

    # Layer 1-4
    for hid, (bid, lid) in enumerate(zip(bottleneck_ids, lids)):
        res = feat
        feat = backbone.__getattr__('s%d' % lid).__getattr__('b%d' % (bid+1)).f.forward(feat)

        if bid == 0:
            res = backbone.__getattr__('s%d' % lid).__getattr__('b%d' % (bid+1)).proj.forward(res)
            res = backbone.__getattr__('s%d' % lid).__getattr__('b%d' % (bid+1)).bn.forward(res)

        feat += res

        if hid + 1 in feat_ids:
            feats.append(feat.clone())

        feat = backbone.__getattr__('s%d' % lid).__getattr__('b%d' % (bid+1)).relu.forward(feat)

    return feats


class Correlation:

    @classmethod
    def compute_crossscale_correlation(cls, _src_feats, _trg_feats, origin_resolution):
        r""" Build 6-dimensional correlation tensor """
        eps = 1e-8

        bsz, ha, wa, hb, wb = origin_resolution

        # Build multiple 4-dimensional correlation tensor
        corr6d = []
        for src_feat in _src_feats:
            ch = src_feat.size(1)
            sha, swa = src_feat.size(-2), src_feat.size(-1)
            src_feat = src_feat.view(bsz, ch, -1).transpose(1, 2)
            src_norm = src_feat.norm(p=2, dim=2, keepdim=True)

            for trg_feat in _trg_feats:
                shb, swb = trg_feat.size(-2), trg_feat.size(-1)
                trg_feat = trg_feat.view(bsz, ch, -1)
                trg_norm = trg_feat.norm(p=2, dim=1, keepdim=True)

                corr = torch.bmm(src_feat, trg_feat)

                corr_norm = torch.bmm(src_norm, trg_norm) + eps
                corr = corr / corr_norm

                correlation = corr.view(bsz, sha, swa, shb, swb).contiguous()
                corr6d.append(correlation)

        # Resize the spatial sizes of the 4D tensors to the same size
        for idx, correlation in enumerate(corr6d):
            corr6d[idx] = Geometry.interpolate4d(correlation, [ha, wa, hb, wb])

        # Build 6-dimensional correlation tensor
        corr6d = torch.stack(corr6d).view(len(_src_feats) * len(_trg_feats),
                                          bsz, ha, wa, hb, wb).transpose(0, 1)

        return corr6d.clamp(min=0)

    @classmethod
    def build_crossscale_correlation(cls, query_feats, key_feats, scales, conv2ds):
        r""" Build multi-scale correlation tensor from a single layer """
        bsz, _, hq, wq = query_feats.size()
        bsz, _, hk, wk = key_feats.size()

        # Construct feature pairs with multiple scales
        _query_feats_scalewise = []
        _key_feats_scalewise = []
        for scale, conv in zip(scales, conv2ds):
            shq = round(hq * scale)
            swq = round(wq * scale)
            shk = round(hk * scale)
            swk = round(wk * scale)

            _query_feats = conv(F.interpolate(query_feats, (shq, swq), mode='bilinear', align_corners=True))
            _key_feats = conv(F.interpolate(key_feats, (shk, swk), mode='bilinear', align_corners=True))

            _query_feats_scalewise.append(_query_feats)
            _key_feats_scalewise.append(_key_feats)

        corrs = cls.compute_crossscale_correlation(_query_feats_scalewise, _key_feats_scalewise, (bsz, hq, wq, hk, wk))

        return corrs.contiguous()


class Geometry:

    @classmethod
    def interpolate4d(cls, tensor4d, size):
        bsz, h1, w1, h2, w2 = tensor4d.size()
        tensor4d = tensor4d.view(bsz, h1, w1, -1).permute(0, 3, 1, 2)
        tensor4d = F.interpolate(tensor4d, size[:2], mode='bilinear', align_corners=True)
        tensor4d = tensor4d.view(bsz, h2, w2, -1).permute(0, 3, 1, 2)
        tensor4d = F.interpolate(tensor4d, size[2:], mode='bilinear', align_corners=True)
        tensor4d = tensor4d.view(bsz, size[2], size[3], size[0], size[1]).permute(0, 3, 4, 1, 2)

        return tensor4d


class CVNet_Rerank(nn.Module):
    def __init__(self, RESNET_DEPTH, REDUCTION_DIM, relup=True):
        super(CVNet_Rerank, self).__init__()

        self.encoder_q = ResNet(RESNET_DEPTH, REDUCTION_DIM, relup)
        self.encoder_q.eval()

        self.scales = [0.25, 0.5, 1.0]
        self.num_scales = len(self.scales)

        feat_dim_l3 = 1024
        self.channel_compressed = 256

        # ------------------------------------------------------------------------------------ #
        # Feature extraction layers (resnet backbone, layer 3 only)
        # ------------------------------------------------------------------------------------ #
        self.softmax = nn.Softmax(dim=1)
        self.extract_feats = extract_feat_res_pycls

        if RESNET_DEPTH == 50:
            nbottlenecks = [3, 4, 6, 3]
            self.feat_ids = [13]
        elif RESNET_DEPTH == 101:
            nbottlenecks = [3, 4, 23, 3]
            self.feat_ids = [30]
        else:
            raise Exception('Unavailable RESNET_DEPTH %s' % RESNET_DEPTH)

        self.bottleneck_ids = reduce(add, list(map(lambda x: list(range(x)), nbottlenecks)))
        self.lids = reduce(add, [[i + 1] * x for i, x in enumerate(nbottlenecks)])
        self.stack_ids = torch.tensor(self.lids).bincount().__reversed__().cumsum(dim=0)[:3]

        # ------------------------------------------------------------------------------------ #
        # Correlation verification network
        # ------------------------------------------------------------------------------------ #
        self.conv2ds = nn.ModuleList([nn.Conv2d(feat_dim_l3, 256, kernel_size=3, padding=1, bias=False) for _ in self.scales])
        self.cv_learner = CVLearner([self.num_scales*self.num_scales, self.num_scales*self.num_scales, self.num_scales*self.num_scales])

    def forward(self, query_img, key_img):
        query_feats = self.extract_feature(query_img)
        key_feats = self.extract_feature(key_img)

        corr_qk = Correlation.build_crossscale_correlation(query_feats[0], key_feats[0], self.scales, self.conv2ds)
        logits_qk = self.cv_learner(corr_qk)
        score = self.softmax(logits_qk)[:, 1]
        return score

    def forward_global(self, x):
        x = self.encoder_q(x)
        return x

    def extract_feature(self, img):
        with torch.no_grad():
            feats = self.extract_feats(img, self.encoder_q.net, self.feat_ids, self.bottleneck_ids, self.lids)
        return feats

    def extract_featuremap(self, img):
        with torch.no_grad():
            feats = self.extract_feats(img, self.encoder_q.net, self.feat_ids, self.bottleneck_ids, self.lids)
        return feats

    def extract_score_with_featuremap(self, query_feats, key_feats):
        with torch.no_grad():
            corr_qk = Correlation.build_crossscale_correlation(query_feats[0], key_feats[0], self.scales, self.conv2ds)
            logits_qk = self.cv_learner(corr_qk)
            score = self.softmax(logits_qk)[0][1]
        return score

    @torch.no_grad()
    def rerank_shortlist(self, query_img, db_imgs, batch_size=16):
        """Scores one query against a short list of database images.

        query_img: 1x3xHxW tensor (host memory), db_imgs: list of 1x3xHxW tensors.
        The database side is batched; images in a shortlist are resized to the
        same resolution by the test loader, so they can be concatenated.
        """
        query_feats = self.extract_featuremap(query_img.cuda())
        scores = []
        for s in range(0, len(db_imgs), batch_size):
            batch = torch.cat(db_imgs[s:s + batch_size], dim=0).cuda(non_blocking=True)
            key_feats = self.extract_featuremap(batch)
            q = [f.expand(batch.size(0), -1, -1, -1) for f in query_feats]
            corr_qk = Correlation.build_crossscale_correlation(q[0], key_feats[0], self.scales, self.conv2ds)
            logits_qk = self.cv_learner(corr_qk)
            scores.append(self.softmax(logits_qk)[:, 1].float().cpu())
        return torch.cat(scores)


class CVNet_Global(nn.Module):
    """Global-only model used to build the initial ranking (ResNet + GeM + whitening)."""

    def __init__(self, RESNET_DEPTH, REDUCTION_DIM, relup=True):
        super(CVNet_Global, self).__init__()
        self.encoder_q = ResNet(RESNET_DEPTH, REDUCTION_DIM, relup)
        self.head = ResHead(REDUCTION_DIM)

    def forward(self, x, targets=None):
        desc = self.encoder_q(x)
        desc = F.normalize(desc, p=2, dim=-1)
        if targets is None:
            return desc
        return self.head(desc, targets)
