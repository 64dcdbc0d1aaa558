# -*- coding: utf-8 -*-
"""
Stacked U-Net used by DocUNet.

The first U-Net predicts a coarse 2-channel forward mapping (x, y offsets in
[-1, 1]); its last feature map is concatenated with the prediction and fed to a
second U-Net that refines the mapping.  Both outputs are supervised.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_bn_relu(in_ch, out_ch, kernel_size=3, stride=1, dilation=1):
    padding = dilation * (kernel_size - 1) // 2
    return nn.Sequential(
        nn.Conv2d(in_ch, out_ch, kernel_size, stride=stride, padding=padding,
                  dilation=dilation, bias=False),
        nn.BatchNorm2d(out_ch),
        nn.ReLU(inplace=True),
    )


class DoubleConv(nn.Module):
    def __init__(self, in_ch, out_ch):
        super(DoubleConv, self).__init__()
        self.block = nn.Sequential(
            conv_bn_relu(in_ch, out_ch),
            conv_bn_relu(out_ch, out_ch),
        )

    def forward(self, x):
        return self.block(x)


class Down(nn.Module):
    def __init__(self, in_ch, out_ch):
        super(Down, self).__init__()
        self.pool = nn.MaxPool2d(2)
        self.conv = DoubleConv(in_ch, out_ch)

    def forward(self, x):
        return self.conv(self.pool(x))


class Up(nn.Module):
    """Upsample, pad to the skip size (inputs may be odd), concat, double conv."""

    def __init__(self, in_ch, skip_ch, out_ch, bilinear=False):
        super(Up, self).__init__()
        if bilinear:
            self.up = nn.Sequential(
                nn.Upsample(scale_factor=2, mode='bilinear', align_corners=True),
                nn.Conv2d(in_ch, in_ch // 2, 1),
            )
        else:
            self.up = nn.ConvTranspose2d(in_ch, in_ch // 2, kernel_size=2, stride=2)
        self.conv = DoubleConv(in_ch // 2 + skip_ch, out_ch)

    def forward(self, x, skip):
        x = self.up(x)
        dy = skip.size(2) - x.size(2)
        dx = skip.size(3) - x.size(3)
        if dy != 0 or dx != 0:
            x = F.pad(x, [dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
        return self.conv(torch.cat([skip, x], dim=1))


class UNet(nn.Module):
    def __init__(self, in_channels, out_channels, base_channels=64, depth=4, bilinear=False):
        super(UNet, self).__init__()
        self.depth = depth
        chs = [base_channels * (2 ** i) for i in range(depth + 1)]
        self.inc = DoubleConv(in_channels, chs[0])
        self.downs = nn.ModuleList([Down(chs[i], chs[i + 1]) for i in range(depth)])
        self.ups = nn.ModuleList([
            Up(chs[i + 1], chs[i], chs[i], bilinear=bilinear) for i in reversed(range(depth))
        ])
        self.out_channels = chs[0]
        self.head = nn.Conv2d(chs[0], out_channels, kernel_size=1)

    def forward(self, x):
        skips = [self.inc(x)]
        for down in self.downs:
            skips.append(down(skips[-1]))
        y = skips.pop()
        for up in self.ups:
            y = up(y, skips.pop())
        return self.head(y), y


class DocUNet(nn.Module):
    """Two U-Nets stacked; the second sees the first one's features + prediction."""

    def __init__(self, in_channels=3, out_channels=2, base_channels=64, depth=4):
        super(DocUNet, self).__init__()
        self.unet1 = UNet(in_channels, out_channels, base_channels, depth)
        self.unet2 = UNet(self.unet1.out_channels + out_channels, out_channels, base_channels, depth)
        self._init_weights()

    def _init_weights(self):
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
                nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        pred1, feat1 = self.unet1(x)
        pred2, _ = self.unet2(torch.cat([feat1, pred1], dim=1))
        return pred1, pred2


def unwarp(img, flow, out_size=None):
    """Resample ``img`` (N,3,H,W) with a backward map ``flow`` (N,2,h,w) in [-1, 1].

    The map is upsampled to ``out_size`` first so that a low-resolution
    prediction can be applied to the full-resolution photograph.
    """
    if out_size is None:
        out_size = img.shape[-2:]
    flow = F.interpolate(flow, size=out_size, mode='bilinear', align_corners=True)
    grid = flow.permute(0, 2, 3, 1).clamp(-1.0, 1.0)
    return F.grid_sample(img, grid, mode='bilinear', padding_mode='border', align_corners=True)


if __name__ == '__main__':
    net = DocUNet(base_channels=32, depth=4)
    x = torch.randn(2, 3, 256, 256)
    p1, p2 = net(x)
    print(p1.shape, p2.shape)
    print('params: {:.2f}M'.format(sum(p.numel() for p in net.parameters()) / 1e6))
