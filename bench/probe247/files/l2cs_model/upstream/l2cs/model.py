import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.autograd import Variable


class L2CS(nn.Module):
    """ResNet backbone with two binned-classification heads (yaw / pitch).

    The original implementation was trained on 4x RTX 3090; nothing in this
    module is device specific, the caller moves it with ``.cuda(gpu)``.
    """

    def __init__(self, block, layers, num_bins):
        self.inplanes = 64
        super(L2CS, self).__init__()
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2)
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2)
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))

        # gaze yaw and pitch are predicted separately
        self.fc_yaw_gaze = nn.Linear(512 * block.expansion, num_bins)
        self.fc_pitch_gaze = nn.Linear(512 * block.expansion, num_bins)

        # Vestigial layer from previous experiments
        self.fc_finetune = nn.Linear(512 * block.expansion + 3, 3)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                m.weight.data.normal_(0, math.sqrt(2. / n))
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.data.fill_(1)
                m.bias.data.zero_()

    def _make_layer(self, block, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * block.expansion,
                          kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes * block.expansion),
            )

        layers = []
        layers.append(block(self.inplanes, planes, stride, downsample))
        self.inplanes = planes * block.expansion
        for i in range(1, blocks):
            layers.append(block(self.inplanes, planes))

        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)

        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)
        x = self.avgpool(x)
        x = x.view(x.size(0), -1)

        # gaze
        pre_yaw_gaze = self.fc_yaw_gaze(x)
        pre_pitch_gaze = self.fc_pitch_gaze(x)
        return pre_yaw_gaze, pre_pitch_gaze


class L2CSLite(nn.Module):
    """MobileNetV2 variant used for the real-time demo on Jetson boards."""

    def __init__(self, num_bins=90, pretrained=True, width_mult=1.0):
        super(L2CSLite, self).__init__()
        backbone = torchvision.models.mobilenet_v2(pretrained=pretrained, width_mult=width_mult)
        self.features = backbone.features
        last_channel = backbone.last_channel
        self.dropout = nn.Dropout(p=0.2)
        self.fc_yaw_gaze = nn.Linear(last_channel, num_bins)
        self.fc_pitch_gaze = nn.Linear(last_channel, num_bins)
        self.register_buffer('idx_tensor', torch.arange(num_bins, dtype=torch.float32))
        self.num_bins = num_bins

    def forward(self, x):
        x = self.features(x)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        x = self.dropout(x)
        return self.fc_yaw_gaze(x), self.fc_pitch_gaze(x)

    @torch.no_grad()
    def predict_angles(self, x, binwidth=4, angle_offset=180):
        """Expected value over the bins, in degrees. idx_tensor is a buffer so
        it already lives on whatever device the module was moved to."""
        yaw, pitch = self.forward(x)
        yaw = F.softmax(yaw, dim=1)
        pitch = F.softmax(pitch, dim=1)
        yaw = torch.sum(yaw * self.idx_tensor, 1) * binwidth - angle_offset
        pitch = torch.sum(pitch * self.idx_tensor, 1) * binwidth - angle_offset
        return yaw, pitch


def freeze_bn(model):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.eval()
            for p in m.parameters():
                p.requires_grad = False
    return model


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
