"""Rotation-equivariant ResNet (ReResNet) backbone of ReDet.

Built on e2cnn: every conv is an R2Conv over the cyclic group C_N acting on
the plane, so features carry N orientation channels per field.
"""
import logging
import os

import e2cnn.nn as enn
import torch
import torch.nn as nn
import torch.utils.checkpoint as cp
from e2cnn import gspaces
from mmcv.runner import load_checkpoint
from torch.nn.modules.batchnorm import _BatchNorm

from ..registry import BACKBONES

# Set default Orientation=8, .i.e, the group C8
# One can change it by passing the env Orientation=xx
Orientation = 8
# keep similar computation or similar params
# One can change it by passing the env fixparams=True
fixparams = False
if 'Orientation' in os.environ:
    Orientation = int(os.environ['Orientation'])
if 'fixparams' in os.environ:
    fixparams = True

gspace = gspaces.Rot2dOnR2(N=Orientation)


def regular_feature_type(gspace: gspaces.GSpace, planes: int):
    """ build a regular feature map with the specified number of channels"""
    assert gspace.fibergroup.order() > 0
    N = gspace.fibergroup.order()
    if fixparams:
        planes *= math_sqrt(N)
    planes = planes / N
    planes = int(planes)
    return enn.FieldType(gspace, [gspace.regular_repr] * planes)


def trivial_feature_type(gspace: gspaces.GSpace, planes: int):
    """ build a trivial feature map with the specified number of channels"""
    if fixparams:
        planes *= math_sqrt(gspace.fibergroup.order())
    planes = int(planes)
    return enn.FieldType(gspace, [gspace.trivial_repr] * planes)


def math_sqrt(x):
    return x ** 0.5


FIELD_TYPE = {
    'trivial': trivial_feature_type,
    'regular': regular_feature_type,
}


def convnxn(inplanes, outplanes, kernel_size=3, stride=1, padding=0,
            groups=1, bias=False, dilation=1):
    in_type = FIELD_TYPE['regular'](gspace, inplanes)
    out_type = FIELD_TYPE['regular'](gspace, outplanes)
    return enn.R2Conv(in_type, out_type, kernel_size,
                      stride=stride,
                      padding=padding,
                      groups=groups,
                      bias=bias,
                      dilation=dilation,
                      sigma=None,
                      frequencies_cutoff=lambda r: 3 * r)


def conv3x3(inplanes, out_planes, stride=1, padding=1, dilation=1):
    """3x3 convolution with padding"""
    in_type = FIELD_TYPE['regular'](gspace, inplanes)
    out_type = FIELD_TYPE['regular'](gspace, out_planes)
    return enn.R2Conv(in_type, out_type, 3,
                      stride=stride,
                      padding=padding,
                      bias=False,
                      dilation=dilation,
                      sigma=None,
                      frequencies_cutoff=lambda r: 3 * r)


def conv1x1(inplanes, out_planes, stride=1, padding=0, dilation=1):
    """1x1 convolution"""
    in_type = FIELD_TYPE['regular'](gspace, inplanes)
    out_type = FIELD_TYPE['regular'](gspace, out_planes)
    return enn.R2Conv(in_type, out_type, 1,
                      stride=stride,
                      padding=padding,
                      bias=False,
                      dilation=dilation,
                      sigma=None,
                      frequencies_cutoff=lambda r: 3 * r)


def build_norm_layer(num_features, postfix=''):
    in_type = FIELD_TYPE['regular'](gspace, num_features)
    return 'bn' + str(postfix), enn.InnerBatchNorm(in_type)


def ennReLU(inplanes, inplace=True):
    in_type = FIELD_TYPE['regular'](gspace, inplanes)
    return enn.ReLU(in_type, inplace=inplace)


def ennMaxPool(inplanes, kernel_size, stride=1, padding=0):
    in_type = FIELD_TYPE['regular'](gspace, inplanes)
    return enn.PointwiseMaxPool(in_type, kernel_size=kernel_size,
                                stride=stride, padding=padding)


def ennTrivialConv(inplanes, outplanes, kernel_size=3, stride=1, padding=0):
    """Lift the (trivial) RGB input into the regular representation."""
    in_type = FIELD_TYPE['trivial'](gspace, inplanes)
    out_type = FIELD_TYPE['regular'](gspace, outplanes)
    return enn.R2Conv(in_type, out_type, kernel_size,
                      stride=stride,
                      padding=padding,
                      bias=False,
                      sigma=None,
                      frequencies_cutoff=lambda r: 3 * r)


class Bottleneck(enn.EquivariantModule):
    expansion = 4

    def __init__(self,
                 in_channels,
                 out_channels,
                 expansion=4,
                 stride=1,
                 dilation=1,
                 downsample=None,
                 style='pytorch',
                 with_cp=False):
        super(Bottleneck, self).__init__()
        assert style in ['pytorch', 'caffe']
        self.in_type = FIELD_TYPE['regular'](gspace, in_channels)
        self.out_type = FIELD_TYPE['regular'](gspace, out_channels)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.expansion = expansion
        assert out_channels % expansion == 0
        self.mid_channels = out_channels // expansion
        self.stride = stride
        self.dilation = dilation
        self.style = style
        self.with_cp = with_cp

        if self.style == 'pytorch':
            self.conv1_stride = 1
            self.conv2_stride = stride
        else:
            self.conv1_stride = stride
            self.conv2_stride = 1

        self.norm1_name, norm1 = build_norm_layer(self.mid_channels, postfix=1)
        self.norm2_name, norm2 = build_norm_layer(self.mid_channels, postfix=2)
        self.norm3_name, norm3 = build_norm_layer(out_channels, postfix=3)

        self.conv1 = conv1x1(in_channels, self.mid_channels,
                             stride=self.conv1_stride)
        self.add_module(self.norm1_name, norm1)
        self.relu1 = ennReLU(self.mid_channels)
        self.conv2 = conv3x3(self.mid_channels, self.mid_channels,
                             stride=self.conv2_stride,
                             padding=dilation,
                             dilation=dilation)
        self.add_module(self.norm2_name, norm2)
        self.relu2 = ennReLU(self.mid_channels)
        self.conv3 = conv1x1(self.mid_channels, out_channels)
        self.add_module(self.norm3_name, norm3)
        self.relu3 = ennReLU(out_channels)
        self.downsample = downsample

    @property
    def norm1(self):
        return getattr(self, self.norm1_name)

    @property
    def norm2(self):
        return getattr(self, self.norm2_name)

    @property
    def norm3(self):
        return getattr(self, self.norm3_name)

    def forward(self, x):

        def _inner_forward(x):
            identity = x

            out = self.conv1(x)
            out = self.norm1(out)
            out = self.relu1(out)

            out = self.conv2(out)
            out = self.norm2(out)
            out = self.relu2(out)

            out = self.conv3(out)
            out = self.norm3(out)

            if self.downsample is not None:
                identity = self.downsample(x)

            out += identity
            return out

        if self.with_cp and x.requires_grad:
            out = cp.checkpoint(_inner_forward, x)
        else:
            out = _inner_forward(x)

        out = self.relu3(out)
        return out

    def evaluate_output_shape(self, input_shape):
        assert len(input_shape) == 4
        assert input_shape[1] == self.in_type.size
        if self.downsample is not None:
            return self.downsample.evaluate_output_shape(input_shape)
        else:
            return input_shape


class ResLayer(nn.Sequential):

    def __init__(self, block, num_blocks, in_channels, out_channels,
                 expansion=4, stride=1, avg_down=False, **kwargs):
        self.block = block
        self.expansion = expansion

        downsample = None
        if stride != 1 or in_channels != out_channels:
            downsample = []
            conv_stride = stride
            if avg_down and stride != 1:
                conv_stride = 1
                in_type = FIELD_TYPE['regular'](gspace, in_channels)
                downsample.append(
                    enn.PointwiseAvgPool(in_type, kernel_size=stride,
                                         stride=stride, ceil_mode=True))
            downsample.extend([
                conv1x1(in_channels, out_channels, stride=conv_stride),
                build_norm_layer(out_channels)[1]
            ])
            downsample = enn.SequentialModule(*downsample)

        layers = []
        layers.append(
            block(in_channels=in_channels, out_channels=out_channels,
                  expansion=self.expansion, stride=stride,
                  downsample=downsample, **kwargs))
        in_channels = out_channels
        for i in range(1, num_blocks):
            layers.append(
                block(in_channels=in_channels, out_channels=out_channels,
                      expansion=self.expansion, stride=1, **kwargs))
        super(ResLayer, self).__init__(*layers)


@BACKBONES.register_module
class ReResNet(nn.Module):
    """ReResNet backbone (rotation-equivariant ResNet)."""

    arch_settings = {
        18: (None, (2, 2, 2, 2)),
        50: (Bottleneck, (3, 4, 6, 3)),
        101: (Bottleneck, (3, 4, 23, 3)),
    }

    def __init__(self,
                 depth,
                 in_channels=3,
                 stem_channels=64,
                 base_channels=64,
                 num_stages=4,
                 strides=(1, 2, 2, 2),
                 dilations=(1, 1, 1, 1),
                 out_indices=(0, 1, 2, 3),
                 style='pytorch',
                 frozen_stages=-1,
                 norm_eval=True,
                 with_cp=False,
                 zero_init_residual=True):
        super(ReResNet, self).__init__()
        self.in_type = enn.FieldType(gspace, in_channels * [gspace.trivial_repr])
        self.depth = depth
        self.stem_channels = stem_channels
        self.base_channels = base_channels
        self.num_stages = num_stages
        self.strides = strides
        self.dilations = dilations
        self.out_indices = out_indices
        self.style = style
        self.frozen_stages = frozen_stages
        self.norm_eval = norm_eval
        self.with_cp = with_cp
        self.zero_init_residual = zero_init_residual
        self.block, stage_blocks = self.arch_settings[depth]
        self.stage_blocks = stage_blocks[:num_stages]
        self.expansion = 4

        self._make_stem_layer(in_channels, stem_channels)

        self.res_layers = []
        _in_channels = stem_channels
        _out_channels = base_channels * self.expansion
        for i, num_blocks in enumerate(self.stage_blocks):
            stride = strides[i]
            dilation = dilations[i]
            res_layer = ResLayer(
                block=self.block, num_blocks=num_blocks,
                in_channels=_in_channels, out_channels=_out_channels,
                expansion=self.expansion, stride=stride, dilation=dilation,
                style=self.style, with_cp=with_cp)
            _in_channels = _out_channels
            _out_channels *= 2
            layer_name = 'layer{}'.format(i + 1)
            self.add_module(layer_name, res_layer)
            self.res_layers.append(layer_name)

        self._freeze_stages()

    def _make_stem_layer(self, in_channels, stem_channels):
        self.conv1 = ennTrivialConv(in_channels, stem_channels,
                                    kernel_size=7, stride=2, padding=3)
        self.norm1_name, norm1 = build_norm_layer(stem_channels, postfix=1)
        self.add_module(self.norm1_name, norm1)
        self.relu = ennReLU(stem_channels)
        self.maxpool = ennMaxPool(stem_channels, kernel_size=3, stride=2,
                                  padding=1)

    @property
    def norm1(self):
        return getattr(self, self.norm1_name)

    def _freeze_stages(self):
        if self.frozen_stages >= 0:
            self.norm1.eval()
            for m in [self.conv1, self.norm1]:
                for param in m.parameters():
                    param.requires_grad = False

        for i in range(1, self.frozen_stages + 1):
            m = getattr(self, 'layer{}'.format(i))
            m.eval()
            for param in m.parameters():
                param.requires_grad = False

    def init_weights(self, pretrained=None):
        if isinstance(pretrained, str):
            logger = logging.getLogger()
            load_checkpoint(self, pretrained, strict=False, logger=logger)
        elif pretrained is None:
            pass
        else:
            raise TypeError('pretrained must be a str or None')

    def forward(self, x):
        x = enn.GeometricTensor(x, self.in_type)
        x = self.conv1(x)
        x = self.norm1(x)
        x = self.relu(x)
        x = self.maxpool(x)
        outs = []
        for i, layer_name in enumerate(self.res_layers):
            res_layer = getattr(self, layer_name)
            x = res_layer(x)
            if i in self.out_indices:
                outs.append(x)
        return tuple(outs)

    def train(self, mode=True):
        super(ReResNet, self).train(mode)
        self._freeze_stages()
        if mode and self.norm_eval:
            for m in self.modules():
                # trick: eval have effect on BatchNorm only
                if isinstance(m, _BatchNorm):
                    m.eval()


if __name__ == '__main__':
    # quick shape / equivariance smoke test: python re_resnet.py
    model = ReResNet(depth=50).cuda()
    model.eval()
    x = torch.randn(2, 3, 224, 224).cuda()
    with torch.no_grad():
        outs = model(x)
        x_rot = torch.rot90(x, 1, dims=(2, 3))
        outs_rot = model(x_rot)
    for o, o_r in zip(outs, outs_rot):
        print(o.tensor.shape, (o.tensor.abs().mean() -
                               o_r.tensor.abs().mean()).item())
    print('max mem: %.1f MB' % (torch.cuda.max_memory_allocated() / 2**20))
