import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as models
from efficientnet_pytorch import EfficientNet


class Resnet101_fl(nn.Module):
    def __init__(self, pretrained):
        super(Resnet101_fl, self).__init__()
        self.model = models.resnet101(pretrained=pretrained)
        self.fc = nn.Linear(2048, 3)
        self.model.fc = nn.Identity()

    def forward(self, x):
        x = self.model(x)
        x = self.fc(x)
        return x


class Resnext101_32x8d_fl(nn.Module):
    def __init__(self, pretrained):
        super(Resnext101_32x8d_fl, self).__init__()
        self.model = models.resnext101_32x8d(pretrained=pretrained)
        self.fc = nn.Sequential(
            nn.Linear(2048, 256),
            nn.ReLU(inplace=True),
            nn.Dropout(p=0.2),
            nn.Linear(256, 3),
        )
        self.model.fc = nn.Identity()

    def forward(self, x):
        x = self.model(x)
        x = self.fc(x)
        return x


class InceptionV3_fl(nn.Module):
    def __init__(self, pretrained):
        super(InceptionV3_fl, self).__init__()
        self.model = models.inception_v3(pretrained=pretrained, aux_logits=False)
        self.model.fc = nn.Identity()
        self.fc = nn.Linear(2048, 3)

    def forward(self, x):
        x = self.model(x)
        x = self.fc(x)
        return x


class Densenet161_fl(nn.Module):
    def __init__(self, pretrained):
        super(Densenet161_fl, self).__init__()
        self.model = models.densenet161(pretrained=pretrained)
        self.model.classifier = nn.Identity()
        self.fc = nn.Linear(2208, 3)

    def forward(self, x):
        x = self.model(x)
        x = self.fc(x)
        return x


class MobilenetV2_fl(nn.Module):
    def __init__(self, pretrained):
        super(MobilenetV2_fl, self).__init__()
        self.model = models.mobilenet_v2(pretrained=pretrained)
        self.model.classifier = nn.Identity()
        self.fc = nn.Linear(1280, 3)

    def forward(self, x):
        x = self.model(x)
        x = self.fc(x)
        return x


class Vgg16_bn_fl(nn.Module):
    def __init__(self, pretrained):
        super(Vgg16_bn_fl, self).__init__()
        self.model = models.vgg16_bn(pretrained=pretrained)
        self.model.classifier[6] = nn.Identity()
        self.fc = nn.Linear(4096, 3)

    def forward(self, x):
        x = self.model(x)
        x = self.fc(x)
        return x


class Efficientnet_fl(nn.Module):
    def __init__(self, pretrained):
        super(Efficientnet_fl, self).__init__()
        if pretrained:
            self.model = EfficientNet.from_pretrained('efficientnet-b4')
        else:
            self.model = EfficientNet.from_name('efficientnet-b4')
        self.model._fc = nn.Identity()
        self.fc = nn.Linear(1792, 3)

    def forward(self, x):
        x = self.model(x)
        x = self.fc(x)
        return x
