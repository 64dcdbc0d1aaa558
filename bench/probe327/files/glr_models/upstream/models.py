import math

import geffnet
import numpy as np
import timm
import torch
import torch.nn as nn
import torch.nn.functional as F
from resnest.torch import resnest101
from torch.nn.parameter import Parameter


sigmoid = torch.nn.Sigmoid()


class Swish(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i * sigmoid(i)
        ctx.save_for_backward(i)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        i = ctx.saved_variables[0]
        sigmoid_i = sigmoid(i)
        return grad_output * (sigmoid_i * (1 + i * (1 - sigmoid_i)))


class Swish_module(nn.Module):
    def forward(self, x):
        return Swish.apply(x)


class DenseCrossEntropy(nn.Module):
    def forward(self, x, target):
        x = x.float()
        target = target.float()
        logprobs = torch.nn.functional.log_softmax(x, dim=-1)

        loss = -logprobs * target
        loss = loss.sum(-1)
        return loss.mean()


class ArcMarginProduct_subcenter(nn.Module):
    def __init__(self, in_features, out_features, k=3):
        super().__init__()
        self.weight = nn.Parameter(torch.FloatTensor(out_features * k, in_features))
        self.reset_parameters()
        self.k = k
        self.out_features = out_features

    def reset_parameters(self):
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)

    def forward(self, features):
        cosine_all = F.linear(F.normalize(features), F.normalize(self.weight))
        cosine_all = cosine_all.view(-1, self.out_features, self.k)
        cosine, _ = torch.max(cosine_all, dim=2)
        return cosine


class ArcFaceLossAdaptiveMargin(nn.modules.Module):
    def __init__(self, margins, s=30.0):
        super().__init__()
        self.crit = DenseCrossEntropy()
        self.s = s
        self.margins = margins

    def forward(self, logits, labels, out_dim):
        ms = []
        ms = self.margins[labels.cpu().numpy()]
        cos_m = torch.from_numpy(np.cos(ms)).float().cuda()
        sin_m = torch.from_numpy(np.sin(ms)).float().cuda()
        th = torch.from_numpy(np.cos(math.pi - ms)).float().cuda()
        mm = torch.from_numpy(np.sin(math.pi - ms) * ms).float().cuda()
        labels = F.one_hot(labels, out_dim).float()
        logits = logits.float()
        cosine = logits
        sine = torch.sqrt(1.0 - torch.pow(cosine, 2))
        phi = cosine * cos_m.view(-1, 1) - sine * sin_m.view(-1, 1)
        phi = torch.where(cosine > th.view(-1, 1), phi, cosine - mm.view(-1, 1))
        output = (labels * phi) + ((1.0 - labels) * cosine)
        output *= self.s
        loss = self.crit(output, labels)
        return loss


class ArcFaceLossFixedMargin(nn.Module):
    """Plain ArcFace with one margin for every class (used for the step-0 warmup runs)."""

    def __init__(self, s=45.0, m=0.1, crit="bce", weight=None, reduction="mean", class_weights_norm=None):
        super().__init__()
        self.crit = nn.CrossEntropyLoss(reduction="none")
        self.weight = weight
        self.reduction = reduction
        self.class_weights_norm = class_weights_norm
        self.s = s
        self.cos_m = math.cos(m)
        self.sin_m = math.sin(m)
        self.th = math.cos(math.pi - m)
        self.mm = math.sin(math.pi - m) * m

    def forward(self, logits, labels):
        logits = logits.float()
        cosine = logits
        sine = torch.sqrt(1.0 - torch.pow(cosine, 2))
        phi = cosine * self.cos_m - sine * self.sin_m
        phi = torch.where(cosine > self.th, phi, cosine - self.mm)
        one_hot = torch.zeros(cosine.size(), device='cuda')
        one_hot.scatter_(1, labels.view(-1, 1).long(), 1)
        output = (one_hot * phi) + ((1.0 - one_hot) * cosine)
        output *= self.s
        loss = self.crit(output, labels)
        if self.weight is not None:
            w = self.weight[labels].to(logits.device)
            loss = loss * w
            if self.class_weights_norm == "batch":
                loss = loss.sum() / w.sum()
            else:
                loss = loss.mean()
            return loss
        return loss.mean() if self.reduction == "mean" else loss.sum()


def gem(x, p=3, eps=1e-6):
    return F.avg_pool2d(x.clamp(min=eps).pow(p), (x.size(-2), x.size(-1))).pow(1. / p)


class GeM(nn.Module):
    def __init__(self, p=3, eps=1e-6, p_trainable=True):
        super(GeM, self).__init__()
        if p_trainable:
            self.p = Parameter(torch.ones(1) * p)
        else:
            self.p = p
        self.eps = eps

    def forward(self, x):
        return gem(x, p=self.p, eps=self.eps)

    def __repr__(self):
        return self.__class__.__name__ + '(' + 'p=' + '{:.4f}'.format(self.p.data.tolist()[0]) + ', ' + 'eps=' + str(self.eps) + ')'


class Effnet_Landmark(nn.Module):

    def __init__(self, enet_type, out_dim, load_pretrained=True):
        super(Effnet_Landmark, self).__init__()
        self.enet = geffnet.create_model(enet_type.replace('-', '_'), pretrained=load_pretrained)
        self.feat = nn.Linear(self.enet.classifier.in_features, 512)
        self.swish = Swish_module()
        self.metric_classify = ArcMarginProduct_subcenter(512, out_dim)
        self.enet.classifier = nn.Identity()

    def extract(self, x):
        return self.enet(x)

    def forward(self, x):
        x = self.extract(x)
        x = self.swish(self.feat(x))
        logits_m = self.metric_classify(x)
        return logits_m


class RexNet20_Landmark(nn.Module):

    def __init__(self, enet_type, out_dim, load_pretrained=True):
        super(RexNet20_Landmark, self).__init__()
        self.enet = timm.create_model('rexnet_200', pretrained=load_pretrained)
        self.feat = nn.Linear(self.enet.head.fc.in_features, 512)
        self.swish = Swish_module()
        self.metric_classify = ArcMarginProduct_subcenter(512, out_dim)
        self.enet.head.fc = nn.Identity()

    def extract(self, x):
        return self.enet(x)

    def forward(self, x):
        x = self.extract(x)
        x = self.swish(self.feat(x))
        logits_m = self.metric_classify(x)
        return logits_m


class ResNest101_Landmark(nn.Module):

    def __init__(self, enet_type, out_dim, load_pretrained=True):
        super(ResNest101_Landmark, self).__init__()
        self.enet = resnest101(pretrained=load_pretrained)
        self.feat = nn.Linear(self.enet.fc.in_features, 512)
        self.swish = Swish_module()
        self.metric_classify = ArcMarginProduct_subcenter(512, out_dim)
        self.enet.fc = nn.Identity()

    def extract(self, x):
        return self.enet(x)

    def forward(self, x):
        x = self.extract(x)
        x = self.swish(self.feat(x))
        logits_m = self.metric_classify(x)
        return logits_m


class Effnet_Landmark_GeM(nn.Module):
    """Variant used for the 2nd stage (higher resolution): GeM + BN-neck instead of global avg pool."""

    def __init__(self, enet_type, out_dim, load_pretrained=True, p=3.0):
        super().__init__()
        self.enet = timm.create_model(enet_type, pretrained=load_pretrained, num_classes=0, global_pool='')
        n_feat = self.enet.num_features
        self.pool = GeM(p=p)
        self.neck = nn.Sequential(
            nn.Linear(n_feat, 512, bias=True),
            nn.BatchNorm1d(512),
            torch.nn.PReLU(),
        )
        self.metric_classify = ArcMarginProduct_subcenter(512, out_dim)

    def extract(self, x):
        x = self.enet(x)
        x = self.pool(x).flatten(1)
        return self.neck(x)

    def forward(self, x, return_embeddings=False):
        emb = self.extract(x)
        if return_embeddings:
            return emb
        return self.metric_classify(emb)
