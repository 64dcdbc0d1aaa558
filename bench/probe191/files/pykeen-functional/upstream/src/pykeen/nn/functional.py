# -*- coding: utf-8 -*-

"""Functional forms of interaction methods.

These implementations allow for an arbitrary number of batch dimensions,
as well as broadcasting and thus naturally support slicing and 1:n scoring.

All functions are written such that they run on whatever device the input
tensors live on (CPU or GPU); none of them allocate tensors without passing
``device=`` explicitly.
"""

from __future__ import annotations

import functools
from typing import Optional, Tuple, Union

import numpy
import torch
import torch.fft
from torch import broadcast_tensors, nn

from ..utils import (
    clamp_norm,
    estimate_cost_of_sequence,
    split_complex,
    tensor_product,
    tensor_sum,
)

__all__ = [
    "complex_interaction",
    "conve_interaction",
    "distmult_interaction",
    "hole_interaction",
    "rotate_interaction",
    "transe_interaction",
    "transh_interaction",
]


def _add_cuda_warning(func):
    """Decorate a function which may be slow on GPUs when used with large batch sizes."""

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapped


def batched_dot(a: torch.FloatTensor, b: torch.FloatTensor) -> torch.FloatTensor:
    """Compute "element-wise" dot-product between batched vectors."""
    return (a * b).sum(dim=-1)


def negative_norm_of_sum(
    *x: torch.FloatTensor,
    p: Union[str, int, float] = 2,
    power_norm: bool = False,
) -> torch.FloatTensor:
    """Evaluate negative norm of a sum of vectors on already broadcasted representations.

    :param x: shape: (batch_size, num_heads, num_relations, num_tails, dim)
        The representations.
    :param p:
        The p for the norm. cf. :func:`torch.linalg.vector_norm`.
    :param power_norm:
        Whether to return $|x-y|_p^p$, cf. https://github.com/pytorch/pytorch/issues/28119
    :return: shape: (batch_size, num_heads, num_relations, num_tails)
        The scores.
    """
    d = tensor_sum(*x)
    if power_norm:
        assert not isinstance(p, str)
        return -(d.abs() ** p).sum(dim=-1)
    return -torch.linalg.vector_norm(d, ord=p, dim=-1)


def negative_norm(
    x: torch.FloatTensor,
    p: Union[str, int, float] = 2,
    power_norm: bool = False,
) -> torch.FloatTensor:
    """Evaluate negative norm of a vector."""
    if power_norm:
        assert not isinstance(p, str)
        return -(x.abs() ** p).sum(dim=-1)
    return -torch.linalg.vector_norm(x, ord=p, dim=-1)


def complex_interaction(
    h: torch.FloatTensor,
    r: torch.FloatTensor,
    t: torch.FloatTensor,
) -> torch.FloatTensor:
    r"""Evaluate the ComplEx interaction function.

    .. math ::
        Re(\langle h, r, conj(t) \rangle)

    :param h: shape: (`*batch_dims`, dim)
        The complex head representations.
    :return: shape: batch_dims
        The scores.
    """
    return torch.real(tensor_product(h, r, torch.conj(t)).sum(dim=-1))


def distmult_interaction(
    h: torch.FloatTensor,
    r: torch.FloatTensor,
    t: torch.FloatTensor,
) -> torch.FloatTensor:
    """Evaluate the DistMult interaction function."""
    return tensor_product(h, r, t).sum(dim=-1)


def transe_interaction(
    h: torch.FloatTensor,
    r: torch.FloatTensor,
    t: torch.FloatTensor,
    p: Union[int, str] = 2,
    power_norm: bool = False,
) -> torch.FloatTensor:
    """Evaluate the TransE interaction function."""
    return negative_norm_of_sum(h, r, -t, p=p, power_norm=power_norm)


def transh_interaction(
    h: torch.FloatTensor,
    w_r: torch.FloatTensor,
    d_r: torch.FloatTensor,
    t: torch.FloatTensor,
    p: int,
    power_norm: bool = False,
) -> torch.FloatTensor:
    """Evaluate the TransH interaction function."""
    return negative_norm_of_sum(
        # h projection to hyperplane
        h,
        -(h * w_r).sum(dim=-1, keepdims=True) * w_r,
        # r
        d_r,
        # -t projection to hyperplane
        -t,
        (t * w_r).sum(dim=-1, keepdims=True) * w_r,
        p=p,
        power_norm=power_norm,
    )


def rotate_interaction(
    h: torch.FloatTensor,
    r: torch.FloatTensor,
    t: torch.FloatTensor,
) -> torch.FloatTensor:
    """Evaluate the RotatE interaction function.

    .. note::
        this method expects all tensors to be of complex datatype, i.e., `torch.is_complex(x)` to evaluate to `True`.
    """
    if estimate_cost_of_sequence(h.shape, r.shape) < estimate_cost_of_sequence(r.shape, t.shape):
        # r expresses a rotation in complex plane.
        # rotate head by relation (=Hadamard product in complex space)
        h = h * r
    else:
        # rotate tail by inverse of relation
        # The inverse rotation is expressed by the complex conjugate of r.
        # The score is computed as the distance of the relation-rotated head to the tail.
        # Equivalently, we can rotate the tail by the inverse relation, and measure the distance to the head, i.e.
        # |h * r - t| = |h - conj(r) * t|
        t = t * torch.conj(r)

    return negative_norm(h - t, p=2, power_norm=False)


def hole_interaction(
    h: torch.FloatTensor,
    r: torch.FloatTensor,
    t: torch.FloatTensor,
) -> torch.FloatTensor:  # noqa: D102
    """Evaluate the HolE interaction function.

    The circular correlation is computed via the FFT; this is fast on GPUs and CPUs alike.
    """
    # Circular correlation of entity embeddings
    a_fft = torch.fft.rfft(h, dim=-1)
    b_fft = torch.fft.rfft(t, dim=-1)

    # complex conjugate
    a_fft = torch.conj(a_fft)

    # Hadamard product in frequency domain
    p_fft = a_fft * b_fft

    # inverse real FFT, shape: (batch_size, num_entities, d)
    composite = torch.fft.irfft(p_fft, n=h.shape[-1], dim=-1)

    # inner product with relation embedding
    return batched_dot(r, composite)


def conve_interaction(
    h: torch.FloatTensor,
    r: torch.FloatTensor,
    t: torch.FloatTensor,
    t_bias: torch.FloatTensor,
    input_channels: int,
    embedding_height: int,
    embedding_width: int,
    hr2d: nn.Module,
    hr1d: nn.Module,
) -> torch.FloatTensor:
    """Evaluate the ConvE interaction function.

    .. note ::
        cuDNN may refuse non-contiguous inputs to the 2D convolution, hence the explicit ``.contiguous()``.
    """
    # repeat if necessary, and concat head and relation, batch_size', num_input_channels, 2*height, width
    # with batch_size' = prod(*batch_dims)
    x = torch.cat(
        torch.broadcast_tensors(
            h.view(*h.shape[:-1], input_channels, embedding_height, embedding_width),
            r.view(*r.shape[:-1], input_channels, embedding_height, embedding_width),
        ),
        dim=-2,
    ).contiguous()
    prefix_shape = x.shape[:-3]
    x = x.view(-1, input_channels, 2 * embedding_height, embedding_width)

    # batch_size', num_input_channels, 2*height, width
    x = hr2d(x)

    # batch_size', num_output_channels * (2 * height - kernel_height + 1) * (width - kernel_width + 1)
    x = x.view(-1, numpy.prod(x.shape[-3:]))
    x = hr1d(x)

    # reshape: (batch_size', embedding_dim) -> (b, h, r, 1, d)
    x = x.view(*prefix_shape, h.shape[-1])

    # For efficient calculation, each of the convolved [h, r] rows has only to be multiplied with one t row
    # output_shape: (batch_size, num_heads, num_relations, num_tails)
    t = t.transpose(-1, -2)
    x = (x @ t).squeeze(dim=-2)

    # add bias term
    return x + t_bias.squeeze(dim=-1)


def random_projection(
    num_entities: int,
    dim: int,
    device: torch.device,
    generator: Optional[torch.Generator] = None,
) -> torch.FloatTensor:
    """Create a random Gaussian projection directly on the target device."""
    x = torch.randn(num_entities, dim, device=device, generator=generator)
    return clamp_norm(x, maxnorm=1.0, p=2, dim=-1)
