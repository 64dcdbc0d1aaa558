import torch
import torch.nn as nn
import torch.nn.functional as F

from .backbone import EfficientBackbone
from .filter import Filter


class CascadeArgumentRegressor(nn.Module):
    def __init__(self, in_channels, base_channels, head_channels, head_num):
        super(CascadeArgumentRegressor, self).__init__()
        self.in_channels = in_channels
        self.base_channels = base_channels
        self.head_channels = head_channels
        self.head_num = head_num

        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.f = nn.Linear(self.in_channels, 160)
        self.g = nn.Linear(self.in_channels, self.base_channels)

        self.headers = nn.ModuleList()
        for i in range(0, self.head_num):
            self.headers.append(
                nn.ModuleList([
                    nn.Linear(160 + self.base_channels, self.head_channels),
                    nn.Linear(self.head_channels, 1),
                ])
            )

    def forward(self, x):
        x = self.pool(x)
        n, c, _, _ = x.shape
        x = x.view(n, c)

        f = self.f(x)
        g = self.g(x)

        pred_args = []
        for i in range(0, self.head_num):
            g = self.headers[i][0](torch.cat((f, g), dim=1))
            pred_args.append(self.headers[i][1](g))

        return pred_args


class FilterPerformer(nn.Module):
    def __init__(self, filter_types):
        super(FilterPerformer, self).__init__()

        self.filters = [Filter.FILTER_MAPPING[ftype]() for ftype in filter_types]

    def forward(self):
        pass

    def restore(self, x, mask, arguments):
        assert len(self.filters) == len(arguments)

        outputs = []
        _image = x
        for filter, arg in zip(self.filters, arguments):
            _image = filter(_image, arg)
            outputs.append(_image * mask + x * (1 - mask))
            _image = _image * mask + x * (1 - mask)

        return outputs

    def adjust(self, image, mask, arguments):
        assert len(self.filters) == len(arguments)

        outputs = []
        _image = image
        for filter, arg in zip(self.filters, arguments):
            _image = filter(_image, arg)
            outputs.append(_image * mask + image * (1 - mask))

        return outputs


class Harmonizer(nn.Module):
    def __init__(self):
        super(Harmonizer, self).__init__()

        self.input_size = (256, 256)
        self.filter_types = [
            Filter.TEMPERATURE,
            Filter.BRIGHTNESS,
            Filter.CONTRAST,
            Filter.SATURATION,
            Filter.HIGHLIGHT,
            Filter.SHADOW,
        ]

        self.backbone = EfficientBackbone.from_name('efficientnet-b0')
        self.regressor = CascadeArgumentRegressor(1280, 160, 1280, len(self.filter_types))
        self.performer = FilterPerformer(self.filter_types)

    def predict_arguments(self, x, mask):
        x = F.interpolate(x, self.input_size, mode='bilinear', align_corners=False)
        mask = F.interpolate(mask, self.input_size, mode='bilinear', align_corners=False)

        fg = torch.cat((x, mask), dim=1)
        bg = torch.cat((x, (1 - mask)), dim=1)

        enc2x, enc4x, enc8x, enc16x, enc32x = self.backbone(fg, bg)
        arguments = self.regressor(enc32x)

        return arguments

    def restore_image(self, x, mask, arguments):
        assert len(arguments) == len(self.filter_types)

        arguments = [torch.clamp(arg, -1, 1).view(-1, 1, 1, 1) for arg in arguments]
        return self.performer.restore(x, mask, arguments)

    def adjust_image(self, image, mask, arguments):
        assert len(arguments) == len(self.filter_types)

        arguments = [(torch.clamp(arg, -1, 1)).view(-1, 1, 1, 1) for arg in arguments]
        return self.performer.adjust(image, mask, arguments)


class Enhancer(nn.Module):
    """Same regressor/filter design, predicting global adjustments for the whole image (no mask)."""

    def __init__(self):
        super(Enhancer, self).__init__()
        self.input_size = (256, 256)
        self.filter_types = [
            Filter.BRIGHTNESS,
            Filter.CONTRAST,
            Filter.SATURATION,
            Filter.HIGHLIGHT,
            Filter.SHADOW,
        ]
        self.backbone = EfficientBackbone.from_name('efficientnet-b0')
        self.regressor = CascadeArgumentRegressor(1280, 160, 1280, len(self.filter_types))
        self.performer = FilterPerformer(self.filter_types)

    def predict_arguments(self, x):
        x = F.interpolate(x, self.input_size, mode='bilinear', align_corners=False)
        ones = torch.ones_like(x[:, :1, ...])
        enc2x, enc4x, enc8x, enc16x, enc32x = self.backbone(torch.cat((x, ones), dim=1), torch.cat((x, ones), dim=1))
        return self.regressor(enc32x)

    def enhance_image(self, x, arguments):
        mask = torch.ones_like(x[:, :1, ...])
        arguments = [torch.clamp(arg, -1, 1).view(-1, 1, 1, 1) for arg in arguments]
        return self.performer.restore(x, mask, arguments)
