import torch
import torch.nn as nn
import torch.nn.functional as F


class Dist(nn.Module):
    """Distance between features and a bank of learnable reciprocal points.

    metric='l2'  -> mean squared euclidean distance
    metric='dot' -> (negative) inner product
    """
    def __init__(self, num_classes=10, num_centers=1, feat_dim=2, init='random'):
        super(Dist, self).__init__()
        self.feat_dim = feat_dim
        self.num_classes = num_classes
        self.num_centers = num_centers

        if init == 'random':
            self.centers = nn.Parameter(0.1 * torch.randn(num_classes * num_centers, self.feat_dim))
        else:
            self.centers = nn.Parameter(torch.Tensor(num_classes * num_centers, self.feat_dim))
            self.centers.data.fill_(0)

    def forward(self, features, center=None, metric='l2'):
        if metric == 'l2':
            f_2 = torch.sum(torch.pow(features, 2), dim=1, keepdim=True)
            if center is None:
                c_2 = torch.sum(torch.pow(self.centers, 2), dim=1, keepdim=True)
                dist = f_2 - 2*torch.matmul(features, torch.transpose(self.centers, 1, 0)) + torch.transpose(c_2, 1, 0)
            else:
                c_2 = torch.sum(torch.pow(center, 2), dim=1, keepdim=True)
                dist = f_2 - 2*torch.matmul(features, torch.transpose(center, 1, 0)) + torch.transpose(c_2, 1, 0)
            dist = dist / float(features.shape[1])
        else:
            if center is None:
                center = self.centers
            else:
                center = center
            dist = features.matmul(center.t())
        dist = torch.reshape(dist, [-1, self.num_classes, self.num_centers])
        dist = torch.mean(dist, dim=2)

        return dist


class ARPLoss(nn.CrossEntropyLoss):
    """Adversarial Reciprocal Points Learning loss (Chen et al., TPAMI 2021)."""
    def __init__(self, **options):
        super(ARPLoss, self).__init__()
        self.use_gpu = options['use_gpu']
        self.weight_pl = float(options['weight_pl'])
        self.temp = options['temp']
        self.Dist = Dist(num_classes=options['num_classes'], feat_dim=options['feat_dim'])
        self.points = self.Dist.centers
        self.radius = nn.Parameter(torch.Tensor(1))
        self.radius.data.fill_(0)
        self.margin_loss = nn.MarginRankingLoss(margin=1.0)

    def forward(self, x, y, labels=None):
        dist_dot_p = self.Dist(x, center=self.points, metric='dot')
        dist_l2_p = self.Dist(x, center=self.points)
        logits = dist_l2_p - dist_dot_p

        if labels is None: return logits, 0
        loss = F.cross_entropy(logits / self.temp, labels)

        center_batch = self.points[labels, :]
        _dis_known = (x - center_batch).pow(2).mean(1)
        target = torch.ones(_dis_known.size()).cuda()
        loss_r = self.margin_loss(self.radius, _dis_known, target)

        loss = loss + self.weight_pl * loss_r

        return logits, loss

    def fake_loss(self, x):
        logits = self.Dist(x, center=self.points)
        prob = F.softmax(logits, dim=1)
        loss = (prob * torch.log(prob)).sum(1).mean().exp()

        return loss


class GCPLoss(nn.CrossEntropyLoss):
    """Generalized Convolutional Prototype Learning loss (the 'GCPL' baseline)."""
    def __init__(self, **options):
        super(GCPLoss, self).__init__()
        self.weight_pl = options['weight_pl']
        self.temp = options['temp']
        self.Dist = Dist(num_classes=options['num_classes'], feat_dim=options['feat_dim'])

    def forward(self, x, y, labels=None):
        dist = self.Dist(x)
        logits = F.softmax(-dist, dim=1)
        if labels is None: return logits, 0
        loss = F.cross_entropy(-dist / self.temp, labels)
        center_batch = self.Dist.centers[labels, :]
        loss_r = F.mse_loss(x, center_batch) / 2
        loss = loss + self.weight_pl * loss_r

        return logits, loss


class Softmax(nn.Module):
    def __init__(self, **options):
        super(Softmax, self).__init__()
        self.temp = options['temp']

    def forward(self, x, y, labels=None):
        logits = y
        if labels is None: return logits, 0
        loss = F.cross_entropy(logits / self.temp, labels)
        return logits, loss


class AMPFace(nn.Module):
    """Additive margin softmax on top of L2-normalised features (baseline).

    The one-hot margin matrix is built on the same device as the logits.
    """
    def __init__(self, **options):
        super(AMPFace, self).__init__()
        self.s = options.get('s', 30.0)
        self.m = options.get('m', 0.35)
        self.fc = nn.Linear(options['feat_dim'], options['num_classes'], bias=False)

    def forward(self, x, y, labels=None):
        x = F.normalize(x, dim=1)
        w = F.normalize(self.fc.weight, dim=1)
        cos = x @ w.t()
        if labels is None: return self.s * cos, 0
        one_hot = torch.zeros_like(cos).scatter_(1, labels.view(-1, 1), 1.0)
        logits = self.s * (cos - self.m * one_hot)
        return logits, F.cross_entropy(logits, labels)
