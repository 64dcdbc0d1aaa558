from __future__ import absolute_import

import re
from typing import Tuple, Union

import torch
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence

# nnutils-pytorch (jpuigcerver/nnutils) ships C++/CUDA kernels for pooling
# and masking variable-sized images inside a padded batch. Both functions
# dispatch on the tensor type: CPU kernels or CUDA kernels, nothing else.
from nnutils_pytorch import adaptive_avgpool_2d, adaptive_maxpool_2d

from laia.data import PaddedTensor


class ImagePoolingSequencer(torch.nn.Module):
    """Collapse the height of a feature map into a fixed number of rows and
    produce a (packed) sequence of column vectors.

    ``sequencer`` is a string like ``avgpool-16``, ``maxpool-8`` or
    ``none-1``. With ``none`` the height of the input must already be fixed.
    """

    def __init__(self, sequencer, columnwise=True):
        # type: (str, bool) -> None
        super(ImagePoolingSequencer, self).__init__()

        m = re.match(r"^(avgpool|maxpool|none)-([1-9][0-9]*)$", sequencer)
        if m is None:
            raise ValueError("The value of the sequencer argument is not valid")

        self._columnwise = columnwise
        self._fix_size = int(m.group(2))
        if m.group(1) == "avgpool":
            self.sequencer = adaptive_avgpool_2d
        elif m.group(1) == "maxpool":
            self.sequencer = adaptive_maxpool_2d
        else:
            self.sequencer = None

    @property
    def columnwise(self):
        return self._columnwise

    @property
    def fix_size(self):
        return self._fix_size

    def forward(self, x):
        # type: (Union[torch.Tensor, PaddedTensor]) -> Union[torch.Tensor, PackedSequence]
        if isinstance(x, PaddedTensor):
            x, xs = x.data, x.sizes
            assert xs.dim() == 2, "PaddedTensor.sizes must be a matrix"
            assert xs.size(1) == 2, (
                "PaddedTensor.sizes must have 2 columns: Height and Width, "
                "{} columns given instead.".format(xs.size(1))
            )
            assert x.size(0) == xs.size(0), (
                "Number of batch sizes ({}) does not match the number of "
                "samples in the batch {}".format(xs.size(0), x.size(0))
            )
        else:
            xs = None

        N, C, H, W = x.size()
        if self.sequencer is None:
            if self._columnwise and H != self._fix_size:
                raise ValueError(
                    "Input images must have a fixed height of {} pixels, "
                    "size is {}".format(self._fix_size, str(x.size()))
                )
            if not self._columnwise and W != self._fix_size:
                raise ValueError(
                    "Input images must have a fixed width of {} pixels, "
                    "size is {}".format(self._fix_size, str(x.size()))
                )
        else:
            if self._columnwise:
                output_sizes = (self._fix_size, None)
            else:
                output_sizes = (None, self._fix_size)
            x = self.sequencer(batch_input=x, output_sizes=output_sizes, batch_sizes=xs)

        if self._columnwise:
            x = x.permute(3, 0, 1, 2).contiguous()
            x = x.view(-1, N, C * self._fix_size)
        else:
            x = x.permute(2, 0, 1, 3).contiguous()
            x = x.view(-1, N, C * self._fix_size)

        if xs is not None:
            # lengths of a packed sequence must be a CPU int64 tensor
            lengths = xs[:, 1] if self._columnwise else xs[:, 0]
            x = pack_padded_sequence(x, lengths.cpu().tolist())
        return x


def image_pooling_sequencer_output_size(sequencer, num_input_features):
    # type: (str, int) -> Tuple[int, bool]
    m = re.match(r"^(avgpool|maxpool|none)-([1-9][0-9]*)$", sequencer)
    if m is None:
        raise ValueError("Invalid sequencer {!r}".format(sequencer))
    return int(m.group(2)) * num_input_features, True
