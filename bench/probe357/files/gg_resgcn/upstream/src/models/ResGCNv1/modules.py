import torch
from torch import nn


class Basic_Block(nn.Module):
    def __init__(self, in_channels, out_channels, residual, bias=False, **kwargs):
        super(Basic_Block, self).__init__()

        if not residual:
            self.residual = lambda x: 0
        elif in_channels == out_channels:
            self.residual = lambda x: x
        else:
            self.residual = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, bias=bias),
                nn.BatchNorm2d(out_channels),
            )

        self.conv = SpatialGraphConv(in_channels, out_channels, bias=bias, **kwargs)
        self.bn = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x, A):
        res_block = self.residual(x)

        x = self.conv(x, A)
        x = self.bn(x)
        x = self.relu(x + res_block)

        return x


class Bottleneck_Block(nn.Module):
    def __init__(self, in_channels, out_channels, residual, bias=False, reduction=4, **kwargs):
        super(Bottleneck_Block, self).__init__()

        inter_channels = out_channels // reduction
        if not residual:
            self.residual = lambda x: 0
        elif in_channels == out_channels:
            self.residual = lambda x: x
        else:
            self.residual = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, bias=bias),
                nn.BatchNorm2d(out_channels),
            )

        self.conv_down = nn.Conv2d(in_channels, inter_channels, 1, bias=bias)
        self.bn_down = nn.BatchNorm2d(inter_channels)
        self.conv = SpatialGraphConv(inter_channels, inter_channels, bias=bias, **kwargs)
        self.bn = nn.BatchNorm2d(inter_channels)
        self.conv_up = nn.Conv2d(inter_channels, out_channels, 1, bias=bias)
        self.bn_up = nn.BatchNorm2d(out_channels)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x, A):
        res_block = self.residual(x)

        x = self.conv_down(x)
        x = self.bn_down(x)
        x = self.relu(x)

        x = self.conv(x, A)
        x = self.bn(x)
        x = self.relu(x)

        x = self.conv_up(x)
        x = self.bn_up(x)
        x = self.relu(x + res_block)

        return x


class Temporal_Basic_Block(nn.Module):
    def __init__(self, channels, temporal_window_size, residual, bias=False, stride=1, **kwargs):
        super(Temporal_Basic_Block, self).__init__()

        padding = ((temporal_window_size - 1) // 2, 0)

        if not residual:
            self.residual = lambda x: 0
        elif stride == 1:
            self.residual = lambda x: x
        else:
            self.residual = nn.Sequential(
                nn.Conv2d(channels, channels, 1, (stride, 1), bias=bias),
                nn.BatchNorm2d(channels),
            )

        self.conv = nn.Conv2d(channels, channels, (temporal_window_size, 1), (stride, 1), padding, bias=bias)
        self.bn = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x, res_module):
        res_block = self.residual(x)

        x = self.conv(x)
        x = self.bn(x)
        x = self.relu(x + res_block + res_module)

        return x


class Temporal_Bottleneck_Block(nn.Module):
    def __init__(self, channels, temporal_window_size, residual, bias=False, reduction=4, stride=1, **kwargs):
        super(Temporal_Bottleneck_Block, self).__init__()

        padding = ((temporal_window_size - 1) // 2, 0)
        inter_channels = channels // reduction
        if not residual:
            self.residual = lambda x: 0
        elif stride == 1:
            self.residual = lambda x: x
        else:
            self.residual = nn.Sequential(
                nn.Conv2d(channels, channels, 1, (stride, 1), bias=bias),
                nn.BatchNorm2d(channels),
            )

        self.conv_down = nn.Conv2d(channels, inter_channels, 1, bias=bias)
        self.bn_down = nn.BatchNorm2d(inter_channels)
        self.conv = nn.Conv2d(inter_channels, inter_channels, (temporal_window_size, 1), (stride, 1), padding,
                              bias=bias)
        self.bn = nn.BatchNorm2d(inter_channels)
        self.conv_up = nn.Conv2d(inter_channels, channels, 1, bias=bias)
        self.bn_up = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x, res_module):
        res_block = self.residual(x)

        x = self.conv_down(x)
        x = self.bn_down(x)
        x = self.relu(x)

        x = self.conv(x)
        x = self.bn(x)
        x = self.relu(x)

        x = self.conv_up(x)
        x = self.bn_up(x)
        x = self.relu(x + res_block + res_module)

        return x


class SpatialGraphConv(nn.Module):
    def __init__(self, in_channels, out_channels, max_graph_distance, bias=False, edge=True, **kwargs):
        super(SpatialGraphConv, self).__init__()

        self.s_kernel_size = max_graph_distance + 1
        self.gcn = nn.Conv2d(in_channels, out_channels * self.s_kernel_size, 1, bias=bias)
        if edge:
            self.edge = nn.Parameter(torch.ones(self.s_kernel_size, 25, 25))
        else:
            self.edge = 1

    def forward(self, x, A):
        # numbers in same class have same weight
        x = self.gcn(x)

        # divide nodes into different classes
        n, kc, t, v = x.size()
        x = x.view(n, self.s_kernel_size, kc // self.s_kernel_size, t, v)

        # spatial graph convolution
        x = torch.einsum('nkctv,kvw->nctw', (x, A[:self.s_kernel_size] * self.edge[:, :v, :v])).contiguous()

        return x


class AttGCN_Module(nn.Module):
    def __init__(self, in_channels, out_channels, block, A, attention, stride=1, kernel_size=[9, 2], **kwargs):
        super(AttGCN_Module, self).__init__()

        if not len(kernel_size) == 2:
            raise ValueError()
        temporal_window_size, max_graph_distance = kernel_size

        if in_channels == out_channels and stride == 1:
            module_res, block_res = True, False
        else:
            module_res, block_res = False, True

        if not module_res:
            self.residual = lambda x: 0
        elif stride == 1 and in_channels == out_channels:
            self.residual = lambda x: x
        else:
            self.residual = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, (stride, 1)),
                nn.BatchNorm2d(out_channels),
            )

        spatial_block = Basic_Block if block == "Basic" else Bottleneck_Block
        temporal_block = Temporal_Basic_Block if block == "Basic" else Temporal_Bottleneck_Block
        self.scn = spatial_block(in_channels, out_channels, block_res, max_graph_distance=max_graph_distance, **kwargs)
        self.tcn = temporal_block(out_channels, temporal_window_size, block_res, stride=stride, **kwargs)
        self.att = attention(out_channels, **kwargs)
        self.register_buffer("A", A)

    def forward(self, x, A=None):
        return self.att(self.tcn(self.scn(x, self.A), self.residual(x)))
