##
# @file   discrete_spectral_transform.py
# @author Yibo Lin
# @date   Jun 2018
# @brief  Discrete spectral transforms (DCT/IDCT/IDXST) implemented with torch.fft
#

import os
import sys
import numpy as np
import torch
import torch.nn.functional as F
import pdb

""" Discrete spectral transformation leveraging fast fourier transform engine.
The math here mainly uses Prosthaphaeresis properties.
The trigonometric identities exploited by prosthaphaeresis relate products of trigonometric functions to sums.
sin(a) sin(b) = 1/2 * (cos(a-b) - cos(a+b))
cos(a) cos(b) = 1/2 * (cos(a-b) + cos(a+b))
sin(a) cos(b) = 1/2 * (sin(a+b) + sin(a-b))
cos(a) sin(b) = 1/2 * (sin(a-b) - sin(a+b))

A 2D FFT performs
y_{u, v} = \sum_i \sum_j x_{i, j} exp(-j*2*pi*u*i/M) exp(-j*2*pi*v*j/N)
         = \sum_i \sum_j x_{i, j} exp(-j*2*pi*(u*i/M + v*j/N))
         = \sum_i \sum_j x_{i, j} (cos(-2*pi*(u*i/M + v*j/N)) + j sin(-2*pi*(u*i/M + v*j/N))).

By mapping the original image from (i, j) to (i, N-j), we can have (u*i/M - v*j/N) inside exp.
This will enable us to derive various cos/sin transformation by computing FFT twice.
"""

# cuFFT keeps one plan per (shape, dtype) and DREAMPlace only ever uses a
# handful of bin grids, so a small cache is enough; the default of 4096 plans
# eats a lot of device memory on large designs.
if torch.cuda.is_available():
    torch.backends.cuda.cufft_plan_cache.max_size = 64

_expk_cache = {}


def get_expk(N, dtype, device):
    """ Compute 2*exp(-1j*pi*u/(2N)), but not exactly the same.
    The actual return is 2*cos(pi*u/(2N)), 2*sin(pi*u/(2N)).
    This will make later multiplication easier.
    """
    key = (N, dtype, str(device))
    if key in _expk_cache:
        return _expk_cache[key]
    pik_by_2N = torch.arange(N, dtype=dtype, device=device)
    pik_by_2N.mul_(np.pi / (2 * N))
    # cos, sin
    # I use sin because the real part requires subtraction
    # this will be easier for multiplication
    expk = torch.stack([pik_by_2N.cos(), pik_by_2N.sin()], dim=-1)
    expk.mul_(2)
    _expk_cache[key] = expk.contiguous()
    return _expk_cache[key]


def get_exact_expk(N, dtype, device):
    """ Compute exp(-j*pi*u/(2N)) = cos(pi*u/(2N)) - j * sin(pi*u/(2N))
    """
    pik_by_2N = torch.arange(N, dtype=dtype, device=device)
    pik_by_2N.mul_(np.pi / (2 * N))
    # cos, -sin
    expk = torch.stack([pik_by_2N.cos(), -pik_by_2N.sin()], dim=-1)
    return expk.contiguous()


def get_perm(N, dtype, device):
    """ Compute permutation to generate following array
    0, 2, 4, ..., 2*(N//2)-2, 2*(N//2)-1, 2*(N//2)-3, ..., 3, 1
    """
    perm = torch.zeros(N, dtype=dtype, device=device)
    perm[0:(N - 1) // 2 + 1] = torch.arange(0, N, 2, dtype=dtype, device=device)
    perm[(N - 1) // 2 + 1:] = torch.arange(2 * (N // 2) - 1, 0, -2, dtype=dtype, device=device)
    return perm


def dct_2N(x, expk=None):
    """ Batch Discrete Cosine Transformation without normalization to coefficients.
    Compute y_u = \sum_i  x_i cos(pi*(2i+1)*u/(2N)),
    Impelements the 2N padding trick to solve DCT with FFT in the following link,
    https://dsp.stackexchange.com/questions/2807/fast-cosine-transform-via-fft

    1. Pad x by zeros
    2. Perform FFT
    3. Multiply by 2*exp(-1j*pi*u/(2N))
    4. Extract the real part
    """
    # last dimension
    N = x.size(-1)
    # pad last dimension
    x_pad = F.pad(x, (0, N), 'constant', 0)

    # the last dimension here becomes -2 because complex numbers introduce a new dimension
    y = torch.view_as_real(torch.fft.rfft(x_pad, dim=-1))[..., 0:N, :]
    y.mul_(1.0 / N)

    if expk is None:
        expk = get_expk(N, dtype=x.dtype, device=x.device)

    # get real part
    y.mul_(expk)

    # I found add is much faster than sum
    #y = y.sum(dim=-1)
    return y[..., 0] + y[..., 1]


def dct_N(x, perm=None, expk=None):
    """ Batch Discrete Cosine Transformation without normalization to coefficients.
    Compute y_u = \sum_i  x_i cos(pi*(2i+1)*u/(2N)),
    Impelements the N permuting trick to solve DCT with FFT.
    """
    # last dimension
    N = x.size(-1)

    if perm is None:
        perm = get_perm(N, dtype=torch.int64, device=x.device)
    if x.ndimension() <= 1:
        x_reorder = x.view([1, N])
    else:
        x_reorder = x.clone()
    # switch from row-major to column-major for speedup
    x_reorder.transpose_(dim0=-2, dim1=-1)
    #x_reorder = x_reorder[..., perm, :]
    x_reorder = x_reorder.index_select(dim=-2, index=perm)
    # switch back
    x_reorder.transpose_(dim0=-2, dim1=-1)

    y = torch.view_as_real(torch.fft.rfft(x_reorder, dim=-1))[..., 0:N, :]
    y.mul_(1.0 / N)

    if expk is None:
        expk = get_expk(N, dtype=x.dtype, device=x.device)

    # get real part
    y.mul_(expk)
    # I found add is much faster than sum
    #y = y.sum(dim=-1)
    return y[..., 0] + y[..., 1]


def idct_2N(x, expk=None):
    """ Batch Inverse Discrete Cosine Transformation without normalization to coefficients.
    Compute y_u = \sum_i  x_i cos(pi*(2u+1)*i/(2N)),
    Impelements the 2N padding trick to solve IDCT with IFFT in the following link,
    https://github.com/tensorflow/tensorflow/blob/r1.10/tensorflow/python/ops/spectral_ops.py
    """
    # last dimension
    N = x.size(-1)

    if expk is None:
        expk = get_expk(N, dtype=x.dtype, device=x.device)

    # multiply by 2*exp(1j*pi*u/(2N))
    x_pad = x.unsqueeze(-1).mul(expk)
    # pad second last dimension, excluding the complex number dimension
    x_pad = F.pad(x_pad, (0, 0, 0, N), 'constant', 0)

    if len(x.size()) == 1:
        x_pad.unsqueeze_(0)

    # the last dimension here becomes -2 because complex numbers introduce a new dimension
    y = torch.fft.irfft(torch.view_as_complex(x_pad.contiguous()), n=2 * N, dim=-1)[..., 0:N]
    y.mul_(N)

    if len(x.size()) == 1:
        y.squeeze_(0)

    return y


def dct2_2N(x, expk0=None, expk1=None):
    """ Batch 2D Discrete Cosine Transformation without normalization to coefficients.
    Compute 1D DCT twice.
    @param x batch tensor, the 2D part is MxN
    @param expk0 with length M
    @param expk1 with length N
    """
    return dct_2N(dct_2N(x.transpose(dim0=-2, dim1=-1), expk0).transpose_(dim0=-2, dim1=-1), expk1)


def dct2_N(x, perm0=None, expk0=None, perm1=None, expk1=None):
    """ Batch 2D Discrete Cosine Transformation without normalization to coefficients.
    Compute 1D DCT twice.
    """
    return dct_N(dct_N(x.transpose(dim0=-2, dim1=-1), perm=perm0, expk=expk0).transpose_(dim0=-2, dim1=-1), perm=perm1, expk=expk1)


def idct2_2N(x, expk0=None, expk1=None):
    """ Batch 2D Inverse Discrete Cosine Transformation without normalization to coefficients.
    Compute 1D DCT twice.
    """
    return idct_2N(idct_2N(x.transpose(dim0=-2, dim1=-1), expk0).transpose_(dim0=-2, dim1=-1), expk1)


def idxst(x, expk=None):
    """ Batch Inverse Discrete Sine Transformation without normalization to coefficients.
    Compute y_u = \sum_i  x_i sin(pi*(2u+1)*i/(2N)),
    """
    N = x.size(-1)
    # flip x and negate odd entries
    x_flip = x.flip(dims=[-1])
    x_flip[..., 1::2].neg_()
    return idct_2N(F.pad(x_flip[..., :N - 1], (1, 0), 'constant', 0), expk)


def idcct2(x, expk_0=None, expk_1=None):
    """ Batch 2D Inverse Discrete Cosine-Cosine Transformation without normalization to coefficients.
    It computes following equation, which is slightly different from standard DCT formulation.
    y_{u, v} = \sum_p \sum_q x_{p, q} cos(pi/M*p*(u+0.5)) cos(pi/N*q*(v+0.5))
    Compute 1D DCT twice.
    """
    return idct_2N(idct_2N(x, expk_1).transpose_(dim0=-2, dim1=-1), expk_0).transpose_(dim0=-2, dim1=-1)


def idsct2(x, expk_0=None, expk_1=None):
    """ Batch 2D Inverse Discrete Sine-Cosine Transformation without normalization to coefficients.
    It computes following equation, which is slightly different from standard DCT formulation.
    y_{u, v} = \sum_p \sum_q x_{p, q} sin(pi/M*p*(u+0.5)) cos(pi/N*q*(v+0.5))
    Compute 1D DST and then 1D DCT.
    """
    return idct_2N(idxst(x.transpose(dim0=-2, dim1=-1), expk_0).transpose_(dim0=-2, dim1=-1), expk_1)


def idcst2(x, expk_0=None, expk_1=None):
    """ Batch 2D Inverse Discrete Cosine-Sine Transformation without normalization to coefficients.
    It computes following equation, which is slightly different from standard DCT formulation.
    y_{u, v} = \sum_p \sum_q x_{p, q} cos(pi/M*p*(u+0.5)) sin(pi/N*q*(v+0.5))
    Compute 1D DCT and then 1D DST.
    """
    return idxst(idct_2N(x.transpose(dim0=-2, dim1=-1), expk_0).transpose_(dim0=-2, dim1=-1), expk_1)
