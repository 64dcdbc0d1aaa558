"""
Copyright 2019, ETH Zurich

This file is part of L3C-PyTorch.

L3C-PyTorch is free software: you can redistribute it and/or modify
it under the terms of the GNU General Public License as published by
the Free Software Foundation, either version 3 of the License, or
any later version.

--------------------------------------------------------------------------------

Thin wrapper around the arithmetic coding backends. Two backends exist:

    torchac_backend_gpu   built from torchac_kernel.cu (setup.py with COMPILE_CUDA=auto)
    torchac_backend_cpu   built from torchac.cpp, always available

The functions below dispatch on where the CDF lives, so callers can keep the
CDFs on the accelerator and avoid a round-trip through host memory.
"""

import os

import torch

# precision of the quantized CDF; must match the backends (see torchac.cpp)
PRECISION = 16
_MAX_CDF_VALUE = 2 ** PRECISION

# GPU -------------------------------------------------------------------------
try:
    import torchac_backend_gpu
    CUDA_SUPPORTED = True
except ImportError:
    CUDA_SUPPORTED = False

# CPU -------------------------------------------------------------------------
try:
    import torchac_backend_cpu
    CPU_SUPPORTED = True
except ImportError:
    CPU_SUPPORTED = False
    if os.environ.get('TORCHAC_JIT', '0') == '1':
        # build the CPU backend on first import (slow, needs a compiler)
        from torch.utils.cpp_extension import load
        _here = os.path.dirname(os.path.abspath(__file__))
        torchac_backend_cpu = load(
            name='torchac_backend_cpu',
            sources=[os.path.join(_here, 'backend', 'torchac.cpp')],
            extra_cflags=['-O3'],
            verbose=False)
        CPU_SUPPORTED = True

if not CPU_SUPPORTED and not CUDA_SUPPORTED:
    raise ImportError('*** No torchac_backend found! Build it with setup.py.')


def _check_cdf(cdf):
    """cdf: (N1, ..., Nm, Lp) int16 tensor, starting at 0 and ending at 2**PRECISION."""
    if cdf.dtype != torch.int16:
        raise ValueError('CDF must be int16, got {}'.format(cdf.dtype))
    if cdf.dim() < 2:
        raise ValueError('Expected at least 2 dims, got {}'.format(cdf.shape))


def _check_sym(sym):
    if sym.dtype != torch.int16:
        raise ValueError('Symbols must be int16, got {}'.format(sym.dtype))


def _renorm_cast_cdf_(cdf, precision=PRECISION):
    """Map a float CDF in [0, 1] to the int16 CDF the coders expect (in place)."""
    Lp = cdf.shape[-1]
    finals = 1  # NHW1
    # RENORMALIZATION_FACTOR in cuda
    f = torch.tensor(2, dtype=torch.float32, device=cdf.device).pow_(precision)
    cdf = cdf.mul_((f - (Lp - 1)) / finals)  # TODO
    cdf = cdf.round()
    cdf = cdf.to(dtype=torch.int16, non_blocking=True)
    r = torch.arange(Lp, dtype=torch.int16, device=cdf.device)
    cdf.add_(r)
    return cdf


def encode_cdf(cdf, sym):
    """
    :param cdf: CDF as 1HWLp, as int16, on CPU or GPU
    :param sym: the symbols to encode, as int16, on CPU or GPU
    :return: byte-string, encoding `sym`
    """
    _check_cdf(cdf)
    _check_sym(sym)
    if cdf.is_cuda:
        if not CUDA_SUPPORTED:
            raise ValueError('Got CUDA tensor, but torchac_backend_gpu is not available. '
                             'Compile torchac with CUDA support, or use CPU mode.')
        return torchac_backend_gpu.encode_cdf(cdf, sym)
    return torchac_backend_cpu.encode_cdf(cdf, sym)


def decode_cdf(cdf, input_string):
    """
    :param cdf: CDF as 1HWLp, as int16, on CPU or GPU
    :param input_string: byte-string, encoding some symbols `sym`.
    :return: decoded `sym`, on the device of `cdf`
    """
    _check_cdf(cdf)
    if cdf.is_cuda:  # decode on device
        if not CUDA_SUPPORTED:
            raise ValueError('Got CUDA tensor, but torchac_backend_gpu is not available. '
                             'Compile torchac with CUDA support, or use CPU mode.')
        return torchac_backend_gpu.decode_cdf(cdf, input_string)
    return torchac_backend_cpu.decode_cdf(cdf, input_string)


def encode_logistic_mixture(targets, means, log_scales, logit_probs_softmax, sym):
    """
    Encode `sym` with the CDF of a discretized logistic mixture, computed by the
    backend directly from the mixture parameters (no materialized CDF).

    :param targets: the L+1 bin edges, float32, on the device of the parameters
    :param means, log_scales, logit_probs_softmax: NKHW float32
    :param sym: NHW int16
    """
    if sym.is_cuda:
        return torchac_backend_gpu.encode_logistic_mixture(
            targets, means, log_scales, logit_probs_softmax, sym)
    return torchac_backend_cpu.encode_logistic_mixture(
        targets, means, log_scales, logit_probs_softmax, sym)


def decode_logistic_mixture(targets, means, log_scales, logit_probs_softmax, input_string):
    if targets.is_cuda:
        return torchac_backend_gpu.decode_logistic_mixture(
            targets, means, log_scales, logit_probs_softmax, input_string)
    return torchac_backend_cpu.decode_logistic_mixture(
        targets, means, log_scales, logit_probs_softmax, input_string)


# ------------------------------------------------------------------------------
# convenience helpers used by the bitcoding module


def get_symbols(x_quantized, num_levels):
    """Map quantized values in [-1, 1] to symbol indices 0..num_levels-1 (int16)."""
    sym = ((x_quantized + 1.) / 2. * (num_levels - 1)).round()
    return sym.to(torch.int16)


def float_cdf_from_pmf(pmf):
    """pmf: (..., L) float, returns (..., L+1) float CDF starting with 0."""
    cdf = pmf.cumsum(dim=-1)
    spatial_dims = pmf.shape[:-1]
    zeros = torch.zeros(*spatial_dims, 1, dtype=pmf.dtype, device=pmf.device)
    cdf_with_0 = torch.cat([zeros, cdf], dim=-1)
    # On GPU, softmax followed by cumsum can lead to the final value being
    # slightly bigger than 1, so we clamp.
    cdf_with_0 = cdf_with_0.clamp(max=1.)
    return cdf_with_0


def encode_float_cdf(cdf_float, sym, needs_normalization=True):
    """Encode symbols with a float CDF, normalizing and casting it first."""
    if needs_normalization:
        cdf_float = cdf_float / cdf_float[..., -1:].clamp(min=1e-12)
    cdf_int = _renorm_cast_cdf_(cdf_float.clone())
    return encode_cdf(cdf_int, sym)


def decode_float_cdf(cdf_float, byte_stream, needs_normalization=True):
    if needs_normalization:
        cdf_float = cdf_float / cdf_float[..., -1:].clamp(min=1e-12)
    cdf_int = _renorm_cast_cdf_(cdf_float.clone())
    return decode_cdf(cdf_int, byte_stream)


def bits_for(byte_string):
    return len(byte_string) * 8
