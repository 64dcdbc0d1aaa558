import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicConv3d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=(3, 3, 3), stride=(1, 1, 1),
                 padding=(1, 1, 1), bias=False, **kwargs):
        super(BasicConv3d, self).__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size=kernel_size,
                              stride=stride, padding=padding, bias=bias, **kwargs)

    def forward(self, x):
        return self.conv(x)


class LocalBlock3D(nn.Module):
    """Convolution applied independently to 2**halving horizontal strips."""

    def __init__(self, in_channels, out_channels, halving, **kwargs):
        super(LocalBlock3D, self).__init__()
        self.halving = halving
        self.conv = BasicConv3d(in_channels, out_channels, **kwargs)

    def forward(self, x):
        if self.halving == 0:
            return self.conv(x)
        h = x.size(3)
        split_size = int(h // 2 ** self.halving)
        parts = x.split(split_size, 3)
        return torch.cat([self.conv(p) for p in parts], 3)


class GLConv(nn.Module):
    def __init__(self, in_channels, out_channels, halving, fm_sign=False, **kwargs):
        super(GLConv, self).__init__()
        self.fm_sign = fm_sign
        self.global_conv = BasicConv3d(in_channels, out_channels, **kwargs)
        self.local_conv = LocalBlock3D(in_channels, out_channels, halving, **kwargs)

    def forward(self, x):
        gob = self.global_conv(x)
        lcl = self.local_conv(x)
        if not self.fm_sign:
            return F.leaky_relu(gob) + F.leaky_relu(lcl)
        return F.leaky_relu(torch.cat([gob, lcl], dim=3))


class GeMHPP(nn.Module):
    def __init__(self, bin_num=(64,), p=6.5, eps=1.0e-6):
        super(GeMHPP, self).__init__()
        self.bin_num = bin_num
        self.p = nn.Parameter(torch.ones(1) * p)
        self.eps = eps

    def gem(self, x):
        return F.avg_pool2d(x.clamp(min=self.eps).pow(self.p), (1, x.size(-1))).pow(1. / self.p)

    def forward(self, x):
        n, c = x.size()[:2]
        feats = []
        for b in self.bin_num:
            z = x.view(n, c, b, -1)
            feats.append(self.gem(z).squeeze(-1))
        return torch.cat(feats, -1)


class SeparateFC(nn.Module):
    def __init__(self, parts_num, in_channels, out_channels):
        super(SeparateFC, self).__init__()
        self.fc_bin = nn.Parameter(
            nn.init.xavier_uniform_(torch.zeros(parts_num, in_channels, out_channels)))

    def forward(self, x):
        # x: [n, c, p] -> [p, n, c] -> [n, p, c_out]
        x = x.permute(2, 0, 1).contiguous()
        out = x.matmul(self.fc_bin)
        return out.permute(1, 0, 2).contiguous()


class GaitGL(nn.Module):
    def __init__(self, class_num=73, dataset='CASIA-B'):
        super(GaitGL, self).__init__()
        if dataset == 'OUMVLP':
            ch = [32, 64, 128, 256]
        else:
            ch = [32, 64, 128, 128]
        self.conv3d = nn.Sequential(
            BasicConv3d(1, ch[0]),
            nn.LeakyReLU(inplace=True))
        # Local Temporal Aggregation: squeeze every 3 frames into one
        self.LTA = nn.Sequential(
            BasicConv3d(ch[0], ch[0], kernel_size=(3, 1, 1), stride=(3, 1, 1), padding=(0, 0, 0)),
            nn.LeakyReLU(inplace=True))
        self.GLConvA0 = GLConv(ch[0], ch[1], halving=3, fm_sign=False)
        self.MaxPool0 = nn.MaxPool3d(kernel_size=(1, 2, 2), stride=(1, 2, 2))
        self.GLConvA1 = GLConv(ch[1], ch[2], halving=3, fm_sign=False)
        self.GLConvB2 = GLConv(ch[2], ch[3], halving=3, fm_sign=True)

        self.HPP = GeMHPP()
        self.Head0 = SeparateFC(64, ch[3], ch[3])
        self.Bn = nn.BatchNorm1d(ch[3])
        self.Head1 = SeparateFC(64, ch[3], class_num)

        for m in self.modules():
            if isinstance(m, (nn.Conv3d, nn.Conv2d, nn.Conv1d)):
                nn.init.xavier_uniform_(m.weight.data)
            elif isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight.data)
                nn.init.constant_(m.bias.data, 0.0)
            elif isinstance(m, (nn.BatchNorm3d, nn.BatchNorm2d, nn.BatchNorm1d)):
                nn.init.normal_(m.weight.data, 1.0, 0.02)
                nn.init.constant_(m.bias.data, 0.0)

    def forward(self, x):
        # x: [n, s, h, w]
        n, s, h, w = x.size()
        if s < 3:
            repeat = 3 if s == 1 else 2
            x = x.repeat(1, repeat, 1, 1)
        x = x.unsqueeze(1)  # [n, 1, s, h, w]

        x = self.conv3d(x)
        x = self.LTA(x)
        x = self.GLConvA0(x)
        x = self.MaxPool0(x)
        x = self.GLConvA1(x)
        x = self.GLConvB2(x)  # [n, c, s, h, w]

        x = torch.max(x, 2)[0]  # temporal pooling, [n, c, h, w]
        x = self.HPP(x)  # [n, c, p]

        gait = self.Head0(x)  # [n, p, c]
        bnft = self.Bn(gait.permute(0, 2, 1).contiguous())  # [n, c, p]
        logits = self.Head1(bnft)  # [n, p, class_num]
        return bnft.permute(0, 2, 1).contiguous(), logits


class TripletLoss(nn.Module):
    def __init__(self, batch_size, margin):
        super(TripletLoss, self).__init__()
        self.batch_size = batch_size
        self.margin = margin

    def forward(self, feature, label):
        # feature: [p, n, c], label: [p, n]
        p, n, c = feature.size()
        hp_mask = (label.unsqueeze(1) == label.unsqueeze(2)).view(-1)
        hn_mask = (label.unsqueeze(1) != label.unsqueeze(2)).view(-1)

        dist = self.batch_dist(feature)
        mean_dist = dist.mean(1).mean(1)
        dist = dist.view(-1)

        full_hp_dist = torch.masked_select(dist, hp_mask).view(p, n, -1, 1)
        full_hn_dist = torch.masked_select(dist, hn_mask).view(p, n, 1, -1)
        full_loss_metric = F.relu(self.margin + full_hp_dist - full_hn_dist).view(p, -1)

        full_loss_metric_sum = full_loss_metric.sum(1)
        full_loss_num = (full_loss_metric != 0).sum(1).float()
        full_loss_metric_mean = full_loss_metric_sum / full_loss_num
        full_loss_metric_mean[full_loss_num == 0] = 0

        return full_loss_metric_mean, mean_dist, full_loss_num

    def batch_dist(self, x):
        x2 = torch.sum(x ** 2, 2)
        dist = x2.unsqueeze(2) + x2.unsqueeze(2).transpose(1, 2) - 2 * torch.matmul(x, x.transpose(1, 2))
        dist = torch.sqrt(F.relu(dist))
        return dist
