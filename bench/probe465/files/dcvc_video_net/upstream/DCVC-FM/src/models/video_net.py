# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.

import torch
from torch import nn
import torch.nn.functional as F

from ..layers.layers import subpel_conv1x1, conv3x3, DepthConvBlock


backward_grid = [{} for _ in range(9)]    # 0~7 for GPU, -1 for CPU


# pylint: disable=W0221
class LowerBound(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs, bound):
        b = torch.ones_like(inputs) * bound
        ctx.save_for_backward(inputs, b)
        return torch.max(inputs, b)

    @staticmethod
    def backward(ctx, grad_output):
        inputs, b = ctx.saved_tensors
        pass_through_1 = inputs >= b
        pass_through_2 = grad_output < 0

        pass_through = pass_through_1 | pass_through_2
        return pass_through.type(grad_output.dtype) * grad_output, None
# pylint: enable=W0221


def add_grid_cache(flow):
    device_id = -1 if flow.device == torch.device('cpu') else flow.device.index
    if str(flow.size()) not in backward_grid[device_id]:
        N, _, H, W = flow.size()
        tensor_hor = torch.linspace(-1.0, 1.0, W, device=flow.device, dtype=torch.float32).view(
            1, 1, 1, W).expand(N, -1, H, -1)
        tensor_ver = torch.linspace(-1.0, 1.0, H, device=flow.device, dtype=torch.float32).view(
            1, 1, H, 1).expand(N, -1, -1, W)
        backward_grid[device_id][str(flow.size())] = torch.cat([tensor_hor, tensor_ver], 1)


def torch_warp(feature, flow):
    device_id = -1 if feature.device == torch.device('cpu') else feature.device.index
    add_grid_cache(flow)
    flow = torch.cat([flow[:, 0:1, :, :] / ((feature.size(3) - 1.0) / 2.0),
                      flow[:, 1:2, :, :] / ((feature.size(2) - 1.0) / 2.0)], 1)

    grid = (backward_grid[device_id][str(flow.size())] + flow)
    return torch.nn.functional.grid_sample(input=feature,
                                           grid=grid.permute(0, 2, 3, 1),
                                           mode='bilinear',
                                           padding_mode='border',
                                           align_corners=True)


def flow_warp(im, flow):
    is_float16 = False
    if im.dtype == torch.float16:
        is_float16 = True
        im = im.float()
        flow = flow.float()
    warp = torch_warp(im, flow)
    if is_float16:
        warp = warp.half()
    return warp


def bilinearupsacling(inputfeature):
    inputheight = inputfeature.size()[2]
    inputwidth = inputfeature.size()[3]
    outfeature = F.interpolate(
        inputfeature, (inputheight * 2, inputwidth * 2), mode='bilinear', align_corners=False)
    return outfeature


def bilineardownsacling(inputfeature):
    inputheight = inputfeature.size()[2]
    inputwidth = inputfeature.size()[3]
    outfeature = F.interpolate(
        inputfeature, (inputheight // 2, inputwidth // 2), mode='bilinear', align_corners=False)
    return outfeature


class ResBlock(nn.Module):
    def __init__(self, channel, slope=0.01, end_with_relu=False,
                 bottleneck=False, inplace=False):
        super().__init__()
        in_channel = channel // 2 if bottleneck else channel
        self.first_layer = nn.LeakyReLU(negative_slope=slope, inplace=False)
        self.conv1 = nn.Conv2d(channel, in_channel, 3, padding=1)
        self.relu = nn.LeakyReLU(negative_slope=slope, inplace=inplace)
        self.conv2 = nn.Conv2d(in_channel, channel, 3, padding=1)
        self.last_layer = self.relu if end_with_relu else nn.Identity()

    def forward(self, x):
        identity = x
        out = self.first_layer(x)
        out = self.conv1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.last_layer(out)
        return identity + out


class MEBasic(nn.Module):
    def __init__(self, complexity_level=0):
        super().__init__()
        self.relu = nn.ReLU()
        self.by_pass = False
        if complexity_level < 0:
            self.by_pass = True
        elif complexity_level == 0:
            self.me_8x = nn.Sequential(
                nn.Conv2d(8, 32, 7, 1, padding=3),
                nn.ReLU(),
                nn.Conv2d(32, 64, 7, 1, padding=3),
                nn.ReLU(),
                nn.Conv2d(64, 32, 7, 1, padding=3),
                nn.ReLU(),
                nn.Conv2d(32, 16, 7, 1, padding=3),
                nn.ReLU(),
                nn.Conv2d(16, 2, 7, 1, padding=3),
            )
        elif complexity_level == 3:
            self.me_8x = nn.Sequential(
                nn.Conv2d(8, 32, 5, 1, padding=2),
                nn.ReLU(),
                nn.Conv2d(32, 16, 5, 1, padding=2),
                nn.ReLU(),
                nn.Conv2d(16, 2, 5, 1, padding=2),
            )

    def forward(self, x):
        if self.by_pass:
            return x[:, -2:, :, :]
        return self.me_8x(x)


class ME_Spynet(nn.Module):
    def __init__(self):
        super().__init__()
        self.me_8x = MEBasic(0)
        self.me_4x = MEBasic(0)
        self.me_2x = MEBasic(3)
        self.me_1x = MEBasic(3)

    def forward(self, im1, im2):
        batchsize = im1.size()[0]

        im1_8x = F.avg_pool2d(im1, kernel_size=8, stride=8)
        im2_8x = F.avg_pool2d(im2, kernel_size=8, stride=8)
        shape_fine = im1_8x.size()
        zero_shape = [batchsize, 2, shape_fine[2], shape_fine[3]]
        flow_8x = torch.zeros(zero_shape, dtype=im1.dtype, device=im1.device)
        flow_8x = self.me_8x(torch.cat((im1_8x, im2_8x, flow_8x), 1))

        im1_4x = F.avg_pool2d(im1, kernel_size=4, stride=4)
        im2_4x = F.avg_pool2d(im2, kernel_size=4, stride=4)
        flow_4x = bilinearupsacling(flow_8x) * 2.0
        flow_4x = flow_4x + self.me_4x(torch.cat((im1_4x,
                                                  flow_warp(im2_4x, flow_4x),
                                                  flow_4x),
                                                 1))

        im1_2x = F.avg_pool2d(im1, kernel_size=2, stride=2)
        im2_2x = F.avg_pool2d(im2, kernel_size=2, stride=2)
        flow_2x = bilinearupsacling(flow_4x) * 2.0
        flow_2x = flow_2x + self.me_2x(torch.cat((im1_2x,
                                                  flow_warp(im2_2x, flow_2x),
                                                  flow_2x),
                                                 1))

        flow_1x = bilinearupsacling(flow_2x) * 2.0
        flow_1x = flow_1x + self.me_1x(torch.cat((im1,
                                                  flow_warp(im2, flow_1x),
                                                  flow_1x),
                                                 1))
        return flow_1x


class UNet(nn.Module):
    def __init__(self, in_ch=64, out_ch=64, inplace=False):
        super().__init__()
        self.max_pool = nn.MaxPool2d(kernel_size=2, stride=2)

        self.conv1 = DepthConvBlock(in_ch, 32, inplace=inplace)
        self.conv2 = DepthConvBlock(32, 64, inplace=inplace)
        self.conv3 = DepthConvBlock(64, 128, inplace=inplace)

        self.context_refine = nn.Sequential(
            DepthConvBlock(128, 128, inplace=inplace),
            DepthConvBlock(128, 128, inplace=inplace),
            DepthConvBlock(128, 128, inplace=inplace),
            DepthConvBlock(128, 128, inplace=inplace),
        )

        self.up3 = subpel_conv1x1(128, 64, 2)
        self.up_conv3 = DepthConvBlock(128, 64, inplace=inplace)

        self.up2 = subpel_conv1x1(64, 32, 2)
        self.up_conv2 = DepthConvBlock(64, out_ch, inplace=inplace)

    def forward(self, x):
        # encoding path
        x1 = self.conv1(x)
        x2 = self.max_pool(x1)

        x2 = self.conv2(x2)
        x3 = self.max_pool(x2)

        x3 = self.conv3(x3)
        x3 = self.context_refine(x3)

        # decoding + concat path
        d3 = self.up3(x3)
        d3 = torch.cat((x2, d3), dim=1)
        d3 = self.up_conv3(d3)

        d2 = self.up2(d3)
        d2 = torch.cat((x1, d2), dim=1)
        d2 = self.up_conv2(d2)
        return d2


def get_hyper_enc_dec_models(y_channel, z_channel, reduce_enc_layer=False, inplace=False):
    if reduce_enc_layer:
        enc = nn.Sequential(
            nn.Conv2d(y_channel, z_channel, 3, stride=1, padding=1),
            nn.LeakyReLU(inplace=inplace),
            nn.Conv2d(z_channel, z_channel, 3, stride=2, padding=1),
            nn.LeakyReLU(inplace=inplace),
            nn.Conv2d(z_channel, z_channel, 3, stride=2, padding=1),
        )
    else:
        enc = nn.Sequential(
            conv3x3(y_channel, z_channel),
            nn.LeakyReLU(inplace=inplace),
            conv3x3(z_channel, z_channel),
            nn.LeakyReLU(inplace=inplace),
            conv3x3(z_channel, z_channel, stride=2),
            nn.LeakyReLU(inplace=inplace),
            conv3x3(z_channel, z_channel),
            nn.LeakyReLU(inplace=inplace),
            conv3x3(z_channel, z_channel, stride=2),
        )

    dec = nn.Sequential(
        conv3x3(z_channel, y_channel),
        nn.LeakyReLU(inplace=inplace),
        subpel_conv1x1(y_channel, y_channel, 2),
        nn.LeakyReLU(inplace=inplace),
        conv3x3(y_channel, y_channel),
        nn.LeakyReLU(inplace=inplace),
        subpel_conv1x1(y_channel, y_channel, 2),
        nn.LeakyReLU(inplace=inplace),
        conv3x3(y_channel, y_channel),
    )

    return enc, dec
