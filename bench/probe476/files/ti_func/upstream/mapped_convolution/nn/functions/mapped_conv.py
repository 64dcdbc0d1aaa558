import torch
import torch.nn as nn
from torch.autograd import Function
from torch.autograd.function import once_differentiable

import _mapped_convolution_ext as _ext

from ..layer_utils import InterpolationType, check_args


class MappedConvolutionFunction(Function):
    """
    Convolution whose kernel taps are located at arbitrary (sub-pixel)
    positions given by `sample_map` (OH x OW x K x 2). Used for the tangent
    image / icosahedral resampling of spherical images.
    """

    @staticmethod
    def forward(ctx, input, sample_map, weight, bias=None,
                interpolation=InterpolationType.BISPHERICAL):
        check_args(input, sample_map, weight, bias)
        if bias is None:
            bias = torch.zeros(weight.shape[0], dtype=input.dtype, device=input.device)

        ctx.interpolation = int(interpolation)
        ctx.save_for_backward(input, sample_map, weight, bias)

        return _ext.mapped_conv_forward(input.contiguous(), sample_map.contiguous(),
                                        weight.contiguous(), bias.contiguous(),
                                        ctx.interpolation)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        input, sample_map, weight, bias = ctx.saved_tensors
        grad_input, grad_weight, grad_bias = _ext.mapped_conv_backward(
            grad_output.contiguous(), input, sample_map, weight, bias,
            ctx.interpolation)
        return grad_input, None, grad_weight, grad_bias, None


class ResampleToMapFunction(Function):

    @staticmethod
    def forward(ctx, input, sample_map, output_shape,
                interpolation=InterpolationType.BILINEAR):
        ctx.input_shape = input.shape[-2:]
        ctx.interpolation = int(interpolation)
        ctx.save_for_backward(sample_map)
        return _ext.resample_to_map(input.contiguous(), sample_map.contiguous(),
                                    output_shape[0], output_shape[1],
                                    ctx.interpolation)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        sample_map, = ctx.saved_tensors
        grad_input = _ext.resample_from_map(grad_output.contiguous(), sample_map,
                                            ctx.interpolation)
        return grad_input, None, None, None


class MappedConvolution(nn.Module):

    def __init__(self, in_channels, out_channels, kernel_size=1,
                 interpolation=InterpolationType.BISPHERICAL, bias=True):
        super(MappedConvolution, self).__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.interpolation = interpolation

        self.weight = nn.Parameter(torch.Tensor(out_channels, in_channels, kernel_size))
        if bias:
            self.bias = nn.Parameter(torch.Tensor(out_channels))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.kaiming_normal_(self.weight, mode='fan_out', nonlinearity='relu')
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def forward(self, x, sample_map):
        '''
        x:          B x C x H x W
        sample_map: OH x OW x K x 2
        returns     B x OC x OH x OW
        '''
        assert sample_map.shape[2] == self.kernel_size, \
            'Sample map kernel dimension does not match kernel_size'
        return MappedConvolutionFunction.apply(x, sample_map, self.weight,
                                               self.bias, self.interpolation)

    def extra_repr(self):
        return '{in_channels}, {out_channels}, kernel_size={kernel_size}'.format(**self.__dict__)
