# Copyright 2021 AlQuraishi Laboratory
# Copyright 2021 DeepMind Technologies Limited
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
from functools import partialmethod
from typing import Optional
from abc import ABC, abstractmethod

import torch
import torch.nn as nn

from openfold.model.primitives import Linear, LayerNorm
from openfold.utils.chunk_utils import chunk_layer
from openfold.utils.tensor_utils import (
    add,
    permute_final_dims,
    is_fp16_enabled,
)


class BaseTriangleMultiplicativeUpdate(nn.Module, ABC):
    """Implements Algorithms 11 and 12 of the AF2 supplement."""

    @abstractmethod
    def __init__(self, c_z, c_hidden, _outgoing):
        super(BaseTriangleMultiplicativeUpdate, self).__init__()
        self.c_z = c_z
        self.c_hidden = c_hidden
        self._outgoing = _outgoing

        self.linear_g = Linear(self.c_z, self.c_z, init="gating")
        self.linear_z = Linear(self.c_hidden, self.c_z, init="final")

        self.layer_norm_in = LayerNorm(self.c_z)
        self.layer_norm_out = LayerNorm(self.c_hidden)

        self.sigmoid = nn.Sigmoid()

    def _combine_projections(self, a: torch.Tensor, b: torch.Tensor, _inplace_chunk_size: Optional[int] = None):
        if self._outgoing:
            a = permute_final_dims(a, (2, 0, 1))
            b = permute_final_dims(b, (2, 1, 0))
        else:
            a = permute_final_dims(a, (2, 1, 0))
            b = permute_final_dims(b, (2, 0, 1))

        if _inplace_chunk_size is not None:
            # To be replaced by torch vmap
            for i in range(0, a.shape[-3], _inplace_chunk_size):
                a_chunk = a[..., i: i + _inplace_chunk_size, :, :]
                b_chunk = b[..., i: i + _inplace_chunk_size, :, :]
                a[..., i: i + _inplace_chunk_size, :, :] = torch.matmul(a_chunk, b_chunk)
            p = a
        else:
            p = torch.matmul(a, b)

        return permute_final_dims(p, (1, 2, 0))

    @abstractmethod
    def forward(self, z, mask=None, inplace_safe=False, _add_with_inplace=False):
        pass


class TriangleMultiplicativeUpdate(BaseTriangleMultiplicativeUpdate):
    def __init__(self, c_z, c_hidden, _outgoing=True):
        super(TriangleMultiplicativeUpdate, self).__init__(c_z=c_z, c_hidden=c_hidden, _outgoing=_outgoing)

        self.linear_a_p = Linear(self.c_z, self.c_hidden)
        self.linear_a_g = Linear(self.c_z, self.c_hidden, init="gating")
        self.linear_b_p = Linear(self.c_z, self.c_hidden)
        self.linear_b_g = Linear(self.c_z, self.c_hidden, init="gating")

    def _inference_forward(self, z, mask=None, inplace_chunk_size=None, with_add=True):
        """Low-memory variant: projections are computed chunk by chunk and
        the products are accumulated into a single pre-allocated buffer."""
        if mask is None:
            mask = z.new_ones(z.shape[:-1])
        mask = mask.unsqueeze(-1)

        def compute_projection(pair, mask_chunk, a=True):
            layer_norm = self.layer_norm_in
            linear_g = self.linear_a_g if a else self.linear_b_g
            linear_p = self.linear_a_p if a else self.linear_b_p
            pair = layer_norm(pair)
            p = linear_g(pair)
            p.sigmoid_()
            p *= linear_p(pair)
            p *= mask_chunk
            return permute_final_dims(p, (2, 0, 1) if self._outgoing == a else (2, 1, 0))

        a = compute_projection(z, mask, True)
        b = compute_projection(z, mask, False)

        x = torch.empty(z.shape[:-1] + (self.c_hidden,), dtype=z.dtype, device=z.device)
        chunk = inplace_chunk_size or z.shape[-3]
        for i in range(0, z.shape[-3], chunk):
            a_chunk = a[..., i: i + chunk, :]
            x[..., i: i + chunk, :, :] = permute_final_dims(torch.matmul(a_chunk, b), (1, 2, 0))

        x = self.layer_norm_out(x)
        x = self.linear_z(x)
        g = self.linear_g(z).sigmoid_()
        x *= g
        if with_add:
            z += x
            return z
        return x

    def forward(self, z, mask=None, inplace_safe=False, _add_with_inplace=False, _inplace_chunk_size=256):
        if inplace_safe:
            return self._inference_forward(
                z, mask, inplace_chunk_size=_inplace_chunk_size, with_add=_add_with_inplace
            )

        if mask is None:
            mask = z.new_ones(z.shape[:-1])
        mask = mask.unsqueeze(-1)

        z = self.layer_norm_in(z)
        a = mask
        a = a * self.sigmoid(self.linear_a_g(z))
        a = a * self.linear_a_p(z)
        b = mask
        b = b * self.sigmoid(self.linear_b_g(z))
        b = b * self.linear_b_p(z)

        # Prevents overflow of torch.matmul in combine projections in
        # reduced-precision modes
        a_std = a.std()
        b_std = b.std()
        if is_fp16_enabled() and a_std != 0.0 and b_std != 0.0:
            a = a / a.std()
            b = b / b.std()

        if is_fp16_enabled():
            with torch.cuda.amp.autocast(enabled=False):
                x = self._combine_projections(a.float(), b.float())
        else:
            x = self._combine_projections(a, b)

        del a, b
        x = self.layer_norm_out(x)
        x = self.linear_z(x)
        g = self.sigmoid(self.linear_g(z))
        return x * g


class TriangleMultiplicationOutgoing(TriangleMultiplicativeUpdate):
    """Implements Algorithm 11."""
    __init__ = partialmethod(TriangleMultiplicativeUpdate.__init__, _outgoing=True)


class TriangleMultiplicationIncoming(TriangleMultiplicativeUpdate):
    """Implements Algorithm 12."""
    __init__ = partialmethod(TriangleMultiplicativeUpdate.__init__, _outgoing=False)


class FusedTriangleMultiplicativeUpdate(BaseTriangleMultiplicativeUpdate):
    """AF-Multimer v2.3 variant: a and b come from one fused projection."""

    def __init__(self, c_z, c_hidden, _outgoing=True):
        super(FusedTriangleMultiplicativeUpdate, self).__init__(c_z=c_z, c_hidden=c_hidden, _outgoing=_outgoing)

        self.linear_ab_p = Linear(self.c_z, self.c_hidden * 2)
        self.linear_ab_g = Linear(self.c_z, self.c_hidden * 2, init="gating")

    def forward(self, z, mask=None, inplace_safe=False, _add_with_inplace=False, _inplace_chunk_size=256):
        if mask is None:
            mask = z.new_ones(z.shape[:-1])
        mask = mask.unsqueeze(-1)

        z = self.layer_norm_in(z)
        ab = mask
        ab = ab * self.sigmoid(self.linear_ab_g(z))
        ab = ab * self.linear_ab_p(z)

        a = ab[..., :self.c_hidden]
        b = ab[..., self.c_hidden:]

        # Prevents overflow of torch.matmul in combine projections in
        # reduced-precision modes
        a_std = a.std()
        b_std = b.std()
        if is_fp16_enabled() and a_std != 0.0 and b_std != 0.0:
            a = a / a_std
            b = b / b_std

        if is_fp16_enabled():
            with torch.cuda.amp.autocast(enabled=False):  # fused a/b projections
                prod = self._combine_projections(a.float(), b.float(), _inplace_chunk_size)
        else:
            prod = self._combine_projections(a, b, _inplace_chunk_size)

        del a, b
        prod = self.layer_norm_out(prod)
        prod = self.linear_z(prod)
        g = self.sigmoid(self.linear_g(z))
        prod = prod * g
        if inplace_safe and _add_with_inplace:
            return add(z, prod, inplace=True)
        return prod


class FusedTriangleMultiplicationOutgoing(FusedTriangleMultiplicativeUpdate):
    __init__ = partialmethod(FusedTriangleMultiplicativeUpdate.__init__, _outgoing=True)


class FusedTriangleMultiplicationIncoming(FusedTriangleMultiplicativeUpdate):
    __init__ = partialmethod(FusedTriangleMultiplicativeUpdate.__init__, _outgoing=False)
