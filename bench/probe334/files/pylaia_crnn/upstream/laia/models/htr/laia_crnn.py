from __future__ import absolute_import

import math
from typing import Optional, Sequence, Tuple, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import PackedSequence

from nnutils_pytorch import mask_image_from_size

from laia.data import PaddedTensor
from laia.nn.image_pooling_sequencer import ImagePoolingSequencer


class ConvBlock(nn.Module):
    def __init__(
        self,
        in_channels,  # type: int
        out_channels,  # type: int
        kernel_size=3,  # type: Union[int, Tuple[int, int]]
        stride=1,  # type: Union[int, Tuple[int, int]]
        dilation=1,  # type: Union[int, Tuple[int, int]]
        activation=nn.LeakyReLU,  # type: Optional[nn.Module]
        poolsize=None,  # type: Optional[Union[int, Tuple[int, int]]]
        dropout=None,  # type: Optional[float]
        batchnorm=False,  # type: bool
        inplace=False,  # type: bool
        use_masks=False,  # type: bool
    ):
        super(ConvBlock, self).__init__()
        ks, st, di, ps = ConvBlock.prepare_dimensional_args(
            kernel_size, stride, dilation, poolsize
        )
        if ps[0] * ps[1] < 2:
            ps = None
        self.dropout = dropout
        self.in_channels = in_channels
        self.use_masks = use_masks
        self.poolsize = ps
        # Add Conv2d layer (compute padding to perform a full convolution).
        self.conv = nn.Conv2d(
            in_channels,
            out_channels,
            ks,
            stride=st,
            padding=tuple((ks[dim] - 1) // 2 * di[dim] for dim in (0, 1)),
            dilation=di,
            # Note: If batchnorm is used, the bias does not affect the output
            # of the unit.
            bias=not batchnorm,
        )
        # Add Batch normalization
        self.batchnorm = nn.BatchNorm2d(out_channels) if batchnorm else None
        # Activation function must support inplace operations.
        self.activation = activation(inplace=inplace) if activation else None
        # Add maxpool layer
        self.pool = nn.MaxPool2d(ps) if self.poolsize else None

    @staticmethod
    def prepare_dimensional_args(*args, dims=2):
        return [
            tuple(arg) if isinstance(arg, (list, tuple)) else (arg or 1,) * dims
            for arg in args
        ]

    def forward(self, x):
        # type: (Union[torch.Tensor, PaddedTensor]) -> Union[torch.Tensor, PaddedTensor]
        x, xs = (x.data, x.sizes) if isinstance(x, PaddedTensor) else (x, None)
        assert x.size(1) == self.in_channels, (
            "Input image depth ({}) does not match the "
            "expected ({})".format(x.size(1), self.in_channels)
        )

        if self.dropout and 0.0 < self.dropout < 1.0:
            x = F.dropout(x, p=self.dropout, training=self.training)

        x = self.conv(x)
        if self.use_masks:
            x = mask_image_from_size(x, batch_sizes=xs, mask_value=0)

        if self.batchnorm:
            x = self.batchnorm(x)

        if self.activation:
            x = self.activation(x)

        if self.use_masks:
            x = mask_image_from_size(x, batch_sizes=xs, mask_value=0)

        if self.pool:
            x = self.pool(x)

        return x if xs is None else PaddedTensor.build(x, self.get_batch_output_size(xs))

    def get_batch_output_size(self, xs):
        # type: (torch.Tensor) -> torch.Tensor
        ys = torch.zeros_like(xs)
        for dim in 0, 1:
            ys[:, dim] = self.get_output_size(
                size=xs[:, dim],
                kernel_size=self.conv.kernel_size[dim],
                dilation=self.conv.dilation[dim],
                stride=self.conv.stride[dim],
                poolsize=self.poolsize[dim] if self.poolsize else None,
                padding=self.conv.padding[dim],
            )
        return ys

    @staticmethod
    def get_output_size(size, kernel_size, dilation, stride, poolsize, padding=None):
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        size = size.float() if isinstance(size, torch.Tensor) else float(size)
        size = (size + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1
        size = size.floor() if isinstance(size, torch.Tensor) else math.floor(size)
        if poolsize:
            size /= poolsize
        return size.floor().long() if isinstance(size, torch.Tensor) else int(math.floor(size))


class LaiaCRNN(nn.Module):
    def __init__(
        self,
        num_input_channels,  # type: int
        num_output_labels,  # type: int
        cnn_num_features,  # type: Sequence[int]
        cnn_kernel_size,  # type: Sequence[int, Sequence[int]]
        cnn_stride,  # type: Sequence[int, Sequence[int]]
        cnn_dilation,  # type: Sequence[int, Sequence[int]]
        cnn_activation,  # type: Sequence[nn.Module]
        cnn_poolsize,  # type: Sequence[int, Sequence[int]]
        cnn_dropout,  # type: Sequence[float]
        cnn_batchnorm,  # type: Sequence[bool]
        image_sequencer,  # type: str
        rnn_units,  # type: int
        rnn_layers,  # type: int
        rnn_dropout,  # type: float
        lin_dropout,  # type: float
        rnn_type=nn.LSTM,  # type: nn.Module
        inplace=False,  # type: bool
        vertical_text=False,  # type: bool
        use_masks=False,  # type: bool
    ):
        super(LaiaCRNN, self).__init__()
        self._rnn_dropout = rnn_dropout
        self._lin_dropout = lin_dropout

        # Add convolutional blocks, in a VGG style.
        conv_blocks = []
        ni = num_input_channels
        for i, nh in enumerate(cnn_num_features):
            conv_blocks.append(
                ConvBlock(
                    in_channels=ni,
                    out_channels=nh,
                    kernel_size=cnn_kernel_size[i],
                    stride=cnn_stride[i],
                    dilation=cnn_dilation[i],
                    activation=cnn_activation[i],
                    poolsize=cnn_poolsize[i],
                    dropout=cnn_dropout[i],
                    batchnorm=cnn_batchnorm[i],
                    inplace=inplace,
                    use_masks=use_masks,
                )
            )
            ni = nh
        self.conv = nn.Sequential(*conv_blocks)
        # Add sequencer module to convert an image into a sequence
        self.sequencer = ImagePoolingSequencer(
            sequencer=image_sequencer, columnwise=not vertical_text
        )
        # Add bidirectional rnn
        self.rnn = rnn_type(
            ni * self.sequencer.fix_size,
            rnn_units,
            rnn_layers,
            dropout=rnn_dropout,
            bidirectional=True,
        )
        self.rnn.flatten_parameters()
        # Add final linear layer
        self.linear = nn.Linear(2 * rnn_units, num_output_labels)

    def dropout(self, x, p):
        # type: (Union[torch.Tensor, PackedSequence], float) -> Union[torch.Tensor, PackedSequence]
        if 0.0 < p < 1.0:
            cls = None
            if isinstance(x, PackedSequence):
                cls = x.__class__
                x, xs = x.data, x.batch_sizes
            x = F.dropout(x, p=p, training=self.training)
            if cls is not None:
                x = cls(x, xs)
        return x

    def forward(self, x):
        # type: (Union[torch.Tensor, PaddedTensor]) -> Union[torch.Tensor, PackedSequence]
        x = self.conv(x)
        x = self.sequencer(x)
        x = self.dropout(x, p=self._rnn_dropout)
        x, _ = self.rnn(x)
        x = self.dropout(x, p=self._lin_dropout)
        return (
            PackedSequence(self.linear(x.data), x.batch_sizes)
            if isinstance(x, PackedSequence)
            else self.linear(x)
        )

    def get_min_valid_image_size(self, device=None):
        """Smallest image width that still yields >= 1 CTC frame."""
        device = device or next(self.parameters()).device
        for w in range(1, 4096):
            xs = torch.tensor([[128, w]], device=device)
            for block in self.conv:
                xs = block.get_batch_output_size(xs)
            if xs[0, 1].item() > 0:
                return w
        return None
