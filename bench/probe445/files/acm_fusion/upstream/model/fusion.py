import torch
import torch.nn as nn


class BiLocalChaFuse(nn.Module):
    def __init__(self, channels=64, r=4):
        super(BiLocalChaFuse, self).__init__()
        inter_channels = int(channels // r)

        self.topdown = nn.Sequential(
            nn.Conv2d(channels, inter_channels, 1, 1, 0),
            nn.BatchNorm2d(inter_channels),
            nn.ReLU(True),
            nn.Conv2d(inter_channels, channels, 1, 1, 0),
            nn.BatchNorm2d(channels),
            nn.Sigmoid()
        )

        self.bottomup = nn.Sequential(
            nn.Conv2d(channels, inter_channels, 1, 1, 0),
            nn.BatchNorm2d(inter_channels),
            nn.ReLU(True),
            nn.Conv2d(inter_channels, channels, 1, 1, 0),
            nn.BatchNorm2d(channels),
            nn.Sigmoid()
        )

        self.post = nn.Sequential(
            nn.Conv2d(channels, channels, 3, 1, 1),
            nn.BatchNorm2d(channels),
            nn.ReLU(True)
        )

    def forward(self, xh, xl):
        topdown_wei = self.topdown(xh)
        bottomup_wei = self.bottomup(xl)
        xs = 2 * xl * topdown_wei + 2 * xh * bottomup_wei
        xs = self.post(xs)
        return xs


class AsymBiChaFuse(nn.Module):
    """Asymmetric bi-directional channel fusion: global top-down, local (point-wise) bottom-up."""
    def __init__(self, channels=64, r=4):
        super(AsymBiChaFuse, self).__init__()
        inter_channels = int(channels // r)

        self.topdown = nn.Sequential(
            nn.AdaptiveAvgPool2d((1, 1)),
            nn.Conv2d(in_channels=channels, out_channels=inter_channels, kernel_size=1, stride=1, padding=0),
            nn.BatchNorm2d(inter_channels, momentum=0.9),
            nn.ReLU(inplace=True),
            nn.Conv2d(in_channels=inter_channels, out_channels=channels, kernel_size=1, stride=1, padding=0),
            nn.BatchNorm2d(channels, momentum=0.9),
            nn.Sigmoid()
        )

        self.bottomup = nn.Sequential(
            nn.Conv2d(in_channels=channels, out_channels=inter_channels, kernel_size=1, stride=1, padding=0),
            nn.BatchNorm2d(inter_channels, momentum=0.9),
            nn.ReLU(inplace=True),
            nn.Conv2d(in_channels=inter_channels, out_channels=channels, kernel_size=1, stride=1, padding=0),
            nn.BatchNorm2d(channels, momentum=0.9),
            nn.Sigmoid()
        )

        self.post = nn.Sequential(
            nn.Conv2d(in_channels=channels, out_channels=channels, kernel_size=3, stride=1, padding=1, dilation=1),
            nn.BatchNorm2d(channels, momentum=0.9),
            nn.ReLU(inplace=True)
        )

    def forward(self, xh, xl):
        topdown_wei = self.topdown(xh)
        bottomup_wei = self.bottomup(xl)
        xs = 2 * torch.mul(xl, topdown_wei) + 2 * torch.mul(xh, bottomup_wei)
        xs = self.post(xs)
        return xs


class BiGlobalChaFuse(nn.Module):
    def __init__(self, channels=64, r=4):
        super(BiGlobalChaFuse, self).__init__()
        inter_channels = int(channels // r)

        self.topdown = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(channels, inter_channels, 1, 1, 0),
            nn.BatchNorm2d(inter_channels),
            nn.ReLU(True),
            nn.Conv2d(inter_channels, channels, 1, 1, 0),
            nn.BatchNorm2d(channels),
            nn.Sigmoid()
        )

        self.bottomup = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Conv2d(channels, inter_channels, 1, 1, 0),
            nn.BatchNorm2d(inter_channels),
            nn.ReLU(True),
            nn.Conv2d(inter_channels, channels, 1, 1, 0),
            nn.BatchNorm2d(channels),
            nn.Sigmoid()
        )

        self.post = nn.Sequential(
            nn.Conv2d(channels, channels, 3, 1, 1),
            nn.BatchNorm2d(channels),
            nn.ReLU(True)
        )

    def forward(self, xh, xl):
        topdown_wei = self.topdown(xh)
        bottomup_wei = self.bottomup(xl)
        xs = 2 * xl * topdown_wei + 2 * xh * bottomup_wei
        xs = self.post(xs)
        return xs
