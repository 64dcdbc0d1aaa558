import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from model.my_functionals import GatedSpatialConv as gsc


class TFD(nn.Module):
    """Taylor finite difference (TFD) edge block: fixed first/second order difference
    kernels applied to the input image, then a small conv to fuse them."""
    def __init__(self, in_channels=1, out_channels=32):
        super(TFD, self).__init__()
        kx = torch.tensor([[0., 0., 0.], [-1., 0., 1.], [0., 0., 0.]]).view(1, 1, 3, 3)
        ky = torch.tensor([[0., -1., 0.], [0., 0., 0.], [0., 1., 0.]]).view(1, 1, 3, 3)
        kxx = torch.tensor([[0., 0., 0.], [1., -2., 1.], [0., 0., 0.]]).view(1, 1, 3, 3)
        kyy = torch.tensor([[0., 1., 0.], [0., -2., 0.], [0., 1., 0.]]).view(1, 1, 3, 3)
        self.register_buffer('kernels', torch.cat([kx, ky, kxx, kyy], dim=0))
        self.fuse = nn.Sequential(
            nn.Conv2d(4 * in_channels, out_channels, 3, 1, 1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )
        self.in_channels = in_channels

    def forward(self, x):
        b, c, h, w = x.shape
        k = self.kernels.repeat(c, 1, 1, 1)
        d = F.conv2d(x, k, padding=1, groups=c)
        return self.fuse(d)


class ResidualBlock(nn.Module):
    def __init__(self, in_channels, out_channels, stride, downsample):
        super(ResidualBlock, self).__init__()
        self.body = nn.Sequential(
            nn.Conv2d(in_channels, out_channels, 3, stride, 1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(True),
            nn.Conv2d(out_channels, out_channels, 3, 1, 1, bias=False),
            nn.BatchNorm2d(out_channels),
        )
        if downsample:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, 1, stride, 0, bias=False),
                nn.BatchNorm2d(out_channels),
            )
        else:
            self.downsample = nn.Sequential()

    def forward(self, x):
        residual = x
        x = self.body(x)
        if self.downsample:
            residual = self.downsample(residual)
        out = F.relu(x + residual, True)
        return out


class _FCNHead(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(_FCNHead, self).__init__()
        inter_channels = in_channels // 4
        self.block = nn.Sequential(
            nn.Conv2d(in_channels, inter_channels, 3, 1, 1, bias=False),
            nn.BatchNorm2d(inter_channels),
            nn.ReLU(True),
            nn.Dropout(0.1),
            nn.Conv2d(inter_channels, out_channels, 1, 1, 0)
        )

    def forward(self, x):
        return self.block(x)


class ISNet(nn.Module):
    def __init__(self, layer_blocks, channels):
        super(ISNet, self).__init__()

        stem_width = int(channels[0])
        self.stem = nn.Sequential(
            nn.BatchNorm2d(3),
            nn.Conv2d(3, stem_width, 3, 2, 1, bias=False),
            nn.BatchNorm2d(stem_width),
            nn.ReLU(True),
            nn.Conv2d(stem_width, stem_width, 3, 1, 1, bias=False),
            nn.BatchNorm2d(stem_width),
            nn.ReLU(True),
            nn.Conv2d(stem_width, 2 * stem_width, 3, 1, 1, bias=False),
            nn.BatchNorm2d(2 * stem_width),
            nn.ReLU(True),
            nn.MaxPool2d(3, 2, 1),
        )
        self.TFD = TFD(in_channels=1, out_channels=1)

        self.layer1 = self._make_layer(block=ResidualBlock, block_num=layer_blocks[0],
                                       in_channels=channels[1], out_channels=channels[1], stride=1)
        self.layer2 = self._make_layer(block=ResidualBlock, block_num=layer_blocks[1],
                                       in_channels=channels[1], out_channels=channels[2], stride=2)
        self.layer3 = self._make_layer(block=ResidualBlock, block_num=layer_blocks[2],
                                       in_channels=channels[2], out_channels=channels[3], stride=2)

        self.deconv2 = nn.ConvTranspose2d(channels[3], channels[2], 4, 2, 1)
        self.uplayer2 = self._make_layer(block=ResidualBlock, block_num=layer_blocks[1],
                                         in_channels=channels[2], out_channels=channels[2], stride=1)
        self.deconv1 = nn.ConvTranspose2d(channels[2], channels[1], 4, 2, 1)
        self.uplayer1 = self._make_layer(block=ResidualBlock, block_num=layer_blocks[0],
                                         in_channels=channels[1], out_channels=channels[1], stride=1)

        self.head = _FCNHead(channels[1], 1)

        ########### shape stream (Gated-SCNN style) ###########
        self.dsn1 = nn.Conv2d(64, 1, 1)
        self.dsn2 = nn.Conv2d(32, 1, 1)
        self.dsn3 = nn.Conv2d(16, 1, 1)

        self.res1 = ResidualBlock(64, 64, stride=1, downsample=None)
        self.d1 = nn.Conv2d(64, 32, 1)
        self.res2 = ResidualBlock(32, 32, stride=1, downsample=None)
        self.d2 = nn.Conv2d(32, 16, 1)
        self.res3 = ResidualBlock(16, 16, stride=1, downsample=None)
        self.d3 = nn.Conv2d(16, 8, 1)
        self.fuse = nn.Conv2d(8, 1, kernel_size=1, padding=0, bias=False)

        self.cw = nn.Conv2d(2, 1, kernel_size=1, padding=0, bias=False)

        self.gate1 = gsc.GatedSpatialConv2d(32, 32)
        self.gate2 = gsc.GatedSpatialConv2d(16, 16)
        self.gate3 = gsc.GatedSpatialConv2d(8, 8)

        self.sigmoid = nn.Sigmoid()
        self.myb = nn.Sequential(
            nn.Conv2d(1, 16, 3, 1, 1),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.Conv2d(16, 16, 3, 1, 1),
        )

    def forward(self, x, x_grad):
        _, _, hei, wid = x.shape
        x_size = x.size()

        x1 = self.stem(x)
        c1 = self.layer1(x1)
        c2 = self.layer2(c1)
        c3 = self.layer3(c2)

        s1 = F.interpolate(self.dsn1(c3), size=[hei, wid], mode='bilinear', align_corners=True)
        s2 = F.interpolate(self.dsn2(c2), size=[hei, wid], mode='bilinear', align_corners=True)
        s3 = F.interpolate(self.dsn3(c1), size=[hei, wid], mode='bilinear', align_corners=True)

        # Canny edge prior of the input image (computed with OpenCV on the host)
        im_arr = x.cpu().numpy().transpose((0, 2, 3, 1))
        im_arr = ((im_arr - im_arr.min()) / (im_arr.max() - im_arr.min() + 1e-8) * 255).astype(np.uint8)
        canny = np.zeros((x_size[0], 1, x_size[2], x_size[3]))
        for i in range(x_size[0]):
            canny[i] = cv2.Canny(im_arr[i], 10, 100)
        canny = torch.from_numpy(canny).cuda().float()

        cs = self.res1(F.interpolate(c3, size=[hei, wid], mode='bilinear', align_corners=True))
        cs = self.d1(cs)
        cs = self.gate1(cs, s1)

        cs = self.res2(cs)
        cs = self.d2(cs)
        cs = self.gate2(cs, s2)

        cs = self.res3(cs)
        cs = self.d3(cs)
        cs = self.gate3(cs, s3)

        cs = self.fuse(cs)
        cs = F.interpolate(cs, x_size[2:], mode='bilinear', align_corners=True)
        edge_out = self.sigmoid(cs)

        cat = torch.cat((edge_out, canny), dim=1)
        acts = self.cw(cat)
        acts = self.sigmoid(acts)

        # TFD branch on the gradient image
        edge_tfd = self.TFD(x_grad)
        acts = acts * (1 + torch.sigmoid(edge_tfd))

        deconc2 = self.deconv2(c3)
        fusec2 = deconc2 + c2
        upc2 = self.uplayer2(fusec2)

        deconc1 = self.deconv1(upc2)
        fusec1 = deconc1 + c1
        upc1 = self.uplayer1(fusec1)

        pred = self.head(upc1)
        out = F.interpolate(pred, size=[hei, wid], mode='bilinear')
        out = out * (1 + self.myb(acts).mean(dim=1, keepdim=True))

        return out, edge_out

    def _make_layer(self, block, block_num, in_channels, out_channels, stride):
        layer = []
        downsample = (in_channels != out_channels) or (stride != 1)
        layer.append(block(in_channels, out_channels, stride, downsample))
        for _ in range(block_num - 1):
            layer.append(block(out_channels, out_channels, 1, False))
        return nn.Sequential(*layer)
