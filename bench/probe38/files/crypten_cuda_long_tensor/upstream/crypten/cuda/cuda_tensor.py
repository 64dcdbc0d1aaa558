#!/usr/bin/env python3

# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

import functools
import math

import torch

from ..common.tensor_types import is_int_tensor
from ..common.util import torch_stack


HANDLED_FUNCTIONS = {}


def implements(torch_function):
    """Register a torch function override for CUDALongTensor"""

    @functools.wraps(torch_function)
    def decorator(func):
        HANDLED_FUNCTIONS[torch_function] = func
        return func

    return decorator


class CUDALongTensor:
    """
    Wrapper around an int64 tensor living on the GPU.

    cuBLAS / cuDNN have no int64 GEMM or convolution, so for ``matmul``,
    ``conv*`` and friends the 64-bit ring elements are split into 16-bit (or
    22-bit) blocks, each block is cast to float64, the op runs on the float64
    blocks (exact, as every partial product fits in the 53-bit mantissa), and
    the int64 result is reassembled with shifts. Additive operations stay on the
    int64 tensor directly.
    """

    __BITS = torch.iinfo(torch.long).bits
    __DEFAULT_NBLOCKS = 3
    __BLOCK_SIZE = {3: None, 4: None}  # Number of bits per block
    __INDICES = {3: [], 4: []}
    __SHIFTS = {3: [], 4: []}
    for nblocks in [3, 4]:
        __BLOCK_SIZE[nblocks] = math.ceil(__BITS / nblocks)
        for i in range(nblocks):
            for j in range(nblocks):
                if (i + j) * __BLOCK_SIZE[nblocks] >= __BITS:
                    continue
                idx = i * nblocks + j
                __INDICES[nblocks].append(idx)
                __SHIFTS[nblocks].append((i + j) * __BLOCK_SIZE[nblocks])

    def __init__(self, data=None, device=None):
        r"""
        Construct a CUDALongTensor with `data` on the specified `device`.
        `data` can either be a torch tensor, a CUDALongTensor, or an array-like
        object that can be converted to a torch tensor via torch.as_tensor(data)
        `dtype` of the torch tensor will be automatically converted to torch.long
        regardless of `dtype` of `data`. `device` must be a cuda device.
        """
        if device is None:
            device = "cuda" if (data is None or not data.is_cuda) else data.device
        else:
            assert str(device).startswith("cuda"), "cannot specify a non-cuda device"

        if data is None:
            self._tensor = torch.tensor([]).to(device)
        elif isinstance(data, CUDALongTensor):
            self._tensor = data._tensor.to(device)
        elif torch.is_tensor(data):
            self._tensor = data.long().to(device)
        else:
            self._tensor = torch.as_tensor(data, dtype=torch.long, device=device)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        if func not in HANDLED_FUNCTIONS or not all(issubclass(t, (torch.Tensor, CUDALongTensor)) for t in types):
            args = [t.tensor() if hasattr(t, "tensor") else t for t in args]
            result = func(*args, **kwargs)
            if torch.is_tensor(result):
                return CUDALongTensor(result)
            if isinstance(result, list):
                return [CUDALongTensor(t) if torch.is_tensor(t) else t for t in result]
            if isinstance(result, tuple):
                return tuple(CUDALongTensor(t) if torch.is_tensor(t) else t for t in result)
            return result
        return HANDLED_FUNCTIONS[func](*args, **kwargs)

    def __repr__(self):
        return "CUDALongTensor({})".format(self._tensor)

    def __setitem__(self, index, value):
        self._tensor[index] = value.data

    @property
    def device(self):
        return self._tensor.device

    @property
    def is_cuda(self):
        return self._tensor.is_cuda

    @property
    def shape(self):
        return self._tensor.shape

    @property
    def data(self):
        return self._tensor.data

    @property
    def dtype(self):
        return self._tensor.dtype

    def tensor(self):
        return self._tensor

    def to(self, *args, **kwargs):
        self._tensor = self._tensor.to(*args, **kwargs)
        if not self._tensor.is_cuda:
            return self._tensor
        return self

    def cuda(self, *args, **kwargs):
        self._tensor = self._tensor.cuda(*args, **kwargs)
        return self

    def cpu(self, *args, **kwargs):
        return self._tensor.cpu(*args, **kwargs)

    def shallow_copy(self):
        """Create a shallow copy of the input tensor."""
        result = CUDALongTensor(self._tensor)
        return result

    def clone(self):
        """Create a deep copy of the input tensor."""
        result = CUDALongTensor()
        result._tensor = self._tensor.clone()
        return result

    @staticmethod
    def __encode_as_fp64(x, num_blocks=3):
        """Converts a CUDALongTensor to an encoding of
        torch.cuda.DoubleTensor that represent the same data.
        """
        nb = num_blocks
        bks = CUDALongTensor.__BLOCK_SIZE[num_blocks]

        x_block = CUDALongTensor.stack([(x >> (bks * i)) & (2**bks - 1) for i in range(nb)])

        return x_block.double()

    @staticmethod
    def __decode_as_int64(x, num_blocks=3):
        """Converts a CUDALongTensor encoded as torch.cuda.DoubleTensor
        back to the CUDALongTensor it encodes
        """
        x = x.long()

        indices = CUDALongTensor.__INDICES[num_blocks]
        shifts = CUDALongTensor.__SHIFTS[num_blocks]

        indices = torch.tensor(indices, device=x.device)
        shifts = torch.tensor(shifts, device=x.device)
        shifts = shifts.view(-1, *([1] * (x.ndim - 1)))

        result = torch.index_select(x, 0, indices)
        result <<= shifts

        return CUDALongTensor(result.sum(0))

    @staticmethod
    def __patched_conv_ops(op, x, y, *args, **kwargs):
        if "groups" in kwargs:
            groups = kwargs["groups"]
            assert groups == x.size(1), "only depthwise or regular conv supported"
        else:
            groups = 1

        bs, c, *img = x.size()
        c_out, c_in, *ks = y.size()
        kernel_elements = functools.reduce(lambda a, b: a * b, ks)

        nb = 3 if kernel_elements < 256 else 4
        nb2 = nb**2

        x_encoded = CUDALongTensor.__encode_as_fp64(x, nb).data
        y_encoded = CUDALongTensor.__encode_as_fp64(y, nb).data

        repeat_idx = [1] * (x_encoded.dim() - 1)
        x_enc_span = x_encoded.repeat(nb, *repeat_idx)
        y_enc_span = torch.repeat_interleave(y_encoded, repeats=nb, dim=0)

        x_enc_span = x_enc_span.transpose_(0, 1).reshape(bs, nb2 * c, *img)
        y_enc_span = y_enc_span.reshape(nb2 * c_out, c_in, *ks)

        c_z = c_out if op in ["conv1d", "conv2d"] else c_in

        z_encoded = getattr(torch, op)(x_enc_span, y_enc_span, *args, **kwargs, groups=nb2 * groups)
        z_encoded = z_encoded.reshape(bs, nb2, c_z, *z_encoded.size()[2:]).transpose_(0, 1)

        return CUDALongTensor.__decode_as_int64(z_encoded, nb)

    @staticmethod
    def stack(tensors, *args, **kwargs):
        is_cuda_long = any(hasattr(t, "tensor") for t in tensors)
        tensors = [t.tensor() if hasattr(t, "tensor") else t for t in tensors]
        if is_cuda_long:
            return CUDALongTensor(torch_stack(tensors, *args, **kwargs))
        return torch_stack(tensors, *args, **kwargs)

    @staticmethod
    @implements(torch.matmul)
    def matmul(x, y, *args, **kwargs):
        # Use 4 blocks if each dot product is 256 elements or larger to prevent overflow in the sum
        nb = 3 if x.size(-1) < 256 else 4

        # Prepend 1 to the dimension of x or y if it is 1-dimensional
        remove_x, remove_y = False, False
        if x.dim() == 1:
            x = x.view(1, x.shape[0])
            remove_x = True
        if y.dim() == 1:
            y = y.view(y.shape[0], 1)
            remove_y = True

        x_encoded = CUDALongTensor.__encode_as_fp64(x, nb).data
        y_encoded = CUDALongTensor.__encode_as_fp64(y, nb).data

        # Span x and y for cross multiplication
        repeat_idx = [1] * (x_encoded.dim() - 1)
        x_enc_span = x_encoded.repeat(nb, *repeat_idx)
        y_enc_span = torch.repeat_interleave(y_encoded, repeats=nb, dim=0)

        # Broadcasting
        for _ in range(abs(x_enc_span.ndim - y_enc_span.ndim)):
            if x_enc_span.ndim > y_enc_span.ndim:
                y_enc_span.unsqueeze_(1)
            else:
                x_enc_span.unsqueeze_(1)

        z_encoded = torch.matmul(x_enc_span, y_enc_span, *args, **kwargs)

        if remove_x:
            z_encoded.squeeze_(-2)
        if remove_y:
            z_encoded.squeeze_(-1)

        return CUDALongTensor.__decode_as_int64(z_encoded, nb)

    @staticmethod
    @implements(torch.conv1d)
    def conv1d(input, weight, *args, **kwargs):
        return CUDALongTensor.__patched_conv_ops("conv1d", input, weight, *args, **kwargs)

    @staticmethod
    @implements(torch.conv2d)
    def conv2d(input, weight, *args, **kwargs):
        return CUDALongTensor.__patched_conv_ops("conv2d", input, weight, *args, **kwargs)

    @staticmethod
    @implements(torch.nn.functional.avg_pool2d)
    def avg_pool2d(x, kernel_size, divisor_override=None, *args, **kwargs):
        x_encoded = CUDALongTensor.__encode_as_fp64(x).data
        bs, c, h, w = x.shape
        x_encoded = x_encoded.reshape(3 * bs, c, h, w)

        z_encoded = torch.nn.functional.avg_pool2d(x_encoded, kernel_size, divisor_override=1, *args, **kwargs)

        z_enc = z_encoded.reshape(3, bs, *z_encoded.shape[1:]).long()
        z = torch.empty(z_enc.shape[1:], dtype=torch.long, device=x.device)
        z += z_enc[0] + (z_enc[1] << 22) + (z_enc[2] << 44)
        if divisor_override is not None:
            z //= divisor_override
        return CUDALongTensor(z)

    def __getattr__(self, name):
        """Forward any other attribute to the wrapped int64 tensor."""
        attr = getattr(self._tensor, name)
        if callable(attr):

            def wrapper(*args, **kwargs):
                args = [t.tensor() if hasattr(t, "tensor") else t for t in args]
                result = attr(*args, **kwargs)
                if is_int_tensor(result):
                    return CUDALongTensor(result)
                return result

            return wrapper
        return attr
