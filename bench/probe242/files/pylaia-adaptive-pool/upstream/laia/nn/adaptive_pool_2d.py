from typing import Callable, Optional, Sequence, Tuple, Union

import torch
from nnutils_pytorch import adaptive_avgpool_2d, adaptive_maxpool_2d, mask_image_from_size
from torch.nn.functional import adaptive_avg_pool2d, adaptive_max_pool2d

from laia.data import PaddedTensor

# nnutils-pytorch (https://github.com/jpuigcerver/nnutils) implements the
# adaptive pooling of a *batch of images of different sizes* in a single
# CUDA kernel (plus a reference C++ implementation for the CPU). Each image
# in the batch is pooled using only its valid region (given by ``sizes``),
# which is not possible with torch.nn.functional.adaptive_*_pool2d on the
# padded tensor.

_Size2 = Union[int, Tuple[Optional[int], Optional[int]]]


def _normalize_output_size(output_size: _Size2) -> Tuple[Optional[int], Optional[int]]:
    if isinstance(output_size, int):
        return output_size, output_size
    assert len(output_size) == 2
    return tuple(output_size)


class AdaptivePool2dBase(torch.nn.Module):
    def __init__(self, output_size: _Size2, func: Callable, reference_func: Callable):
        super().__init__()
        self._output_size = _normalize_output_size(output_size)
        self._func = func
        self._reference_func = reference_func

    @property
    def output_size(self):
        return self._output_size

    def forward(self, x: Union[torch.Tensor, PaddedTensor]):
        x, xs = (x.data, x.sizes) if isinstance(x, PaddedTensor) else (x, None)
        if xs is None:
            # all images in the batch have the same size, no need for the
            # custom kernel
            y = self._reference_func(x, output_size=self.output_size)
            return y

        y = self._func(batch_input=x, output_sizes=self.output_size, batch_sizes=xs)
        if self.output_size[0] is None or self.output_size[1] is None:
            ys = xs.clone()
            dim = 0 if self.output_size[0] is not None else 1
            ys[:, dim] = self.output_size[dim]
            return PaddedTensor.build(y, ys)
        return y

    def __repr__(self) -> str:
        return "{}(output_size={})".format(self.__class__.__name__, self.output_size)


class AdaptiveAvgPool2d(AdaptivePool2dBase):
    def __init__(self, output_size: _Size2):
        super().__init__(
            output_size=output_size,
            func=adaptive_avgpool_2d,
            reference_func=adaptive_avg_pool2d,
        )


class AdaptiveMaxPool2d(AdaptivePool2dBase):
    def __init__(self, output_size: _Size2):
        super().__init__(
            output_size=output_size,
            func=adaptive_maxpool_2d,
            reference_func=adaptive_max_pool2d,
        )


class MaskImageFromSize(torch.nn.Module):
    """Sets to ``mask_value`` the padded region of each image in the batch.

    Needed before every BatchNorm/pooling layer so that the padding does not
    leak into the statistics of the valid region.
    """

    def __init__(self, mask_value: float = 0.0, inplace: bool = False):
        super().__init__()
        self.inplace = inplace
        self.mask_value = mask_value

    def forward(self, x: Union[PaddedTensor, torch.Tensor]) -> Union[PaddedTensor, torch.Tensor]:
        if isinstance(x, PaddedTensor):
            x, xs = x.data, x.sizes
            y = mask_image_from_size(
                batch_input=x,
                batch_sizes=xs,
                mask_value=self.mask_value,
                inplace=self.inplace,
            )
            return PaddedTensor.build(y, xs)
        return x

    def extra_repr(self) -> str:
        s = "mask_value={mask_value}"
        if self.inplace:
            s += ", inplace=True"
        return s.format(**self.__dict__)


def image_pooling_output_sizes(
    xs: torch.Tensor, output_size: Sequence[Optional[int]]
) -> torch.Tensor:
    """Sizes of the images after pooling (used to build PackedSequences)."""
    ys = xs.clone()
    for dim, size in enumerate(output_size):
        if size is not None:
            ys[:, dim] = size
    return ys
