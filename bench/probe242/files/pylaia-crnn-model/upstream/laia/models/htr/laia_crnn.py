from typing import List, Optional, Sequence, Tuple, Type, Union

import torch
import torch.nn as nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence

from laia.data import PaddedTensor
from laia.models.htr.conv_block import ConvBlock
from laia.nn import ImagePoolingSequencer

_RNN_TYPES = {"LSTM": nn.LSTM, "GRU": nn.GRU, "RNN": nn.RNN}


class LaiaCRNN(nn.Module):
    """Convolutional + bidirectional recurrent model for line-level HTR.

    The convolutional blocks reduce the height of the image, the
    ImagePoolingSequencer collapses the remaining height into a sequence of
    column features and a stack of BLSTMs produces the per-frame scores that
    are fed to the CTC loss.
    """

    def __init__(
        self,
        num_input_channels: int,
        num_output_labels: int,
        cnn_num_features: Sequence[int],
        cnn_kernel_size: Sequence[Union[int, Sequence[int]]],
        cnn_stride: Sequence[Union[int, Sequence[int]]],
        cnn_dilation: Sequence[Union[int, Sequence[int]]],
        cnn_activation: Sequence[Type[nn.Module]],
        cnn_poolsize: Sequence[Union[int, Sequence[int]]],
        cnn_dropout: Sequence[float],
        cnn_batchnorm: Sequence[bool],
        image_sequencer: str,
        rnn_units: int,
        rnn_layers: int,
        rnn_dropout: float,
        lin_dropout: float,
        rnn_type: Union[str, Type[nn.RNNBase]] = nn.LSTM,
        inplace: bool = False,
        vertical_text: bool = False,
        use_masks: bool = False,
    ) -> None:
        super().__init__()
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
        if isinstance(rnn_type, str):
            rnn_type = _RNN_TYPES[rnn_type.upper()]
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

    def dropout(self, x: Union[torch.Tensor, PackedSequence], p: float):
        if 0.0 < p < 1.0:
            cls = None
            if isinstance(x, PackedSequence):
                cls = x.__class__
                x, rs = x.data, x.batch_sizes
            x = nn.functional.dropout(x, p=p, training=self.training)
            return x if cls is None else cls(x, rs)
        return x

    def forward(
        self, x: Union[torch.Tensor, PaddedTensor]
    ) -> Union[torch.Tensor, PackedSequence]:
        x = self.conv(x)
        x = self.sequencer(x)
        x = self.dropout(x, p=self._rnn_dropout)
        x, _ = self.rnn(x)
        x = self.dropout(x, p=self._lin_dropout)
        return (
            PackedSequence(data=self.linear(x.data), batch_sizes=x.batch_sizes)
            if isinstance(x, PackedSequence)
            else self.linear(x)
        )

    def get_min_valid_image_size(self, batch_size: int) -> Tuple[int, int]:
        """Smallest (H, W) an image can have without collapsing to zero
        columns after all the pooling layers."""
        h, w = 1, 1
        for block in reversed(self.conv):
            h, w = block.get_input_size(h, w)
        return h, w

    @staticmethod
    def get_conv_output_size(
        size: Tuple[int, int],
        cnn_kernel_size: Sequence[Union[int, Sequence[int]]],
        cnn_stride: Sequence[Union[int, Sequence[int]]],
        cnn_dilation: Sequence[Union[int, Sequence[int]]],
        cnn_poolsize: Sequence[Union[int, Sequence[int]]],
    ) -> Tuple[int, int]:
        size_h, size_w = size
        for ks, st, di, ps in zip(
            cnn_kernel_size, cnn_stride, cnn_dilation, cnn_poolsize
        ):
            size_h = ConvBlock.get_output_size(
                size_h, kernel_size=ks[0], dilation=di[0], stride=st[0], poolsize=ps[0]
            )
            size_w = ConvBlock.get_output_size(
                size_w, kernel_size=ks[1], dilation=di[1], stride=st[1], poolsize=ps[1]
            )
        return size_h, size_w


def sequence_from_padded(x: torch.Tensor, lengths: torch.Tensor) -> PackedSequence:
    """Helper used by the ``ImagePoolingSequencer``: packs the column
    features (T x N x C) of a batch of padded images. The lengths must be
    sorted in decreasing order (the DataModule sorts each batch by width).
    """
    return pack_padded_sequence(x, lengths.cpu().tolist(), enforce_sorted=True)


def count_parameters(model: nn.Module, trainable_only: bool = True) -> int:
    return sum(
        p.numel() for p in model.parameters() if p.requires_grad or not trainable_only
    )


def describe(model: nn.Module) -> List[str]:
    lines = [f"{name}: {tuple(p.shape)}" for name, p in model.named_parameters()]
    lines.append(f"total trainable parameters: {count_parameters(model)}")
    if next(model.parameters()).is_cuda:
        lines.append("model lives on " + str(next(model.parameters()).device))
    return lines
