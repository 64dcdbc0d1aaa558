# Copyright (C) 2022 Intel Corporation
# SPDX-License-Identifier: BSD-3-Clause

"""Leaky integrator dynamics."""

import os
import numpy as np
import torch
from torch.utils.cpp_extension import load

from ...utils.int_utils import right_shift_to_zero
from ...utils.utils import staticproperty
from ... import jitconfig


class Accelerated:
    """Lazy loading of the CUDA-accelerated module. The kernel is JIT compiled on first use."""
    module = None

    @staticproperty
    def leaky_integrator():
        if Accelerated.module is None:
            if jitconfig.VERBOSE is True:
                print(
                    'Leaky Integrator accelerated module does not exist. '
                    'Initializing with JIT compilation.'
                )
            if not torch.cuda.is_available():
                raise Exception(
                    'CUDA acceleration of Leaky Integrator failed. '
                    'CUDA is not available in the system.'
                )
            if jitconfig.TORCH_CUDA_ARCH is not None:
                os.environ['TORCH_CUDA_ARCH_LIST'] = jitconfig.TORCH_CUDA_ARCH
            Accelerated.module = load(
                name='dynamics',
                sources=[
                    os.path.dirname(os.path.abspath(__file__))
                    + '/leaky_integrator.cu'
                ],
            )
        return Accelerated.module


def dynamics(input, decay, state, w_scale, threshold=None, debug=False):
    """Leaky integrator dynamics. It automatically switches
    between CUDA and CPU implementation depending on available hardware.

    .. math::
        y[t] &= (1 - \\alpha)\\,y[t-1] + x[t] \\\\
        s[t] &= y[t] \\geq \\vartheta \\\\
        y[t] &= y[t]\\,(1-s[t])

    Parameters
    ----------
    input : torch tensor
        input tensor.
    decay : torch tensor
        decay tensor. Note: it is unscaled integer value here.
    state : torch tensor
        dynamics state.
    w_scale : int
        parameter scaling for integer calculations.
    threshold : float or None, optional
        threshold for spiking dynamics. Default is None.
    debug : bool, optional
        enable/disable debug mode. Default is False.

    Returns
    -------
    torch tensor
        leaky integrator output.

    Note
    ----
    When threshold is not supplied, no spike is generated.
    """
    if threshold is None:
        threshold = -1  # -1 means no reset mechanism
    _LIDynamics.DEBUG = debug

    if torch.numel(state) == 1:
        state = state * torch.ones(input.shape[:-1]).to(input.device)

    output = _LIDynamics.apply(input, decay, state, threshold, w_scale)

    return output


def persistent_state(state, spike):
    """Handles persistent state changes due to spike in the last time bin.
    """
    spike = (spike[..., -1] > 0).to(state.dtype)
    return state * (1 - spike)


class _LIDynamics(torch.autograd.Function):
    """ """
    DEBUG = False

    @staticmethod
    def forward(ctx, input, decay, state, threshold, w_scale):
        """ """
        output = _li_dynamics_fwd(
            input, decay, state, threshold,
            w_scale, dtype=torch.int64
        )

        if _LIDynamics.DEBUG is True and input.is_cuda is True:
            _output, *_ = _li_dynamics_fwd(
                input, decay, state, threshold,
                w_scale, dtype=torch.int64
            )
            # print('Fwd Checking')
            for i in range(output.shape[1]):
                if torch.norm(output[0, i] - _output[0, i]) > 1e-6:
                    print('output:', i, torch.norm(
                        output[0, i] - _output[0, i]
                    ))
                    print(output[0, i, -50:] * w_scale)
                    print(_output[0, i, -50:] * w_scale)
                    print(output[0, i, -50:] * w_scale
                          - _output[0, i, -50:] * w_scale)

        ctx.save_for_backward(output, decay)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        """ """
        output, decay = ctx.saved_tensors

        grad_input, grad_decay = _li_dynamics_bwd(grad_output, output, decay)

        if _LIDynamics.DEBUG is True and grad_output.is_cuda is True:
            _grad_input, _grad_decay = _li_dynamics_bwd(
                grad_output, output, decay
            )

            diff = torch.abs(grad_input - _grad_input)
            print(
                'grad_input error:',
                torch.norm(grad_input - _grad_input).item(), diff.max().item()
            )

            diff = torch.abs(grad_decay - _grad_decay)
            print(
                'grad_decay error:',
                torch.norm(grad_decay - _grad_decay).item(), diff.max().item()
            )

        # decay gradients are shared for the whole layer: sum over batch and time
        return grad_input, grad_decay, None, None, None


def _li_dynamics_fwd(
    input, decay, state, threshold, w_scale, dtype=torch.int32
):
    """ """
    if input.is_cuda and not _LIDynamics.DEBUG:
        return Accelerated.leaky_integrator.fwd(
            input.contiguous(), decay.contiguous(), state.contiguous(),
            threshold, w_scale
        )

    output_old = (state * w_scale).clone().detach().to(dtype).to(input.device)
    decay_int = (1 << 12) - decay.clone().detach().to(dtype).to(input.device)
    output = torch.zeros_like(input)

    threshold *= w_scale

    for n in range(input.shape[-1]):
        output_new = right_shift_to_zero(output_old * decay_int, 12) + \
            (w_scale * input[..., n]).to(dtype)
        if threshold > 0:
            spike_new = (output_new >= threshold)
            output_old = output_new * (spike_new < 0.5)
        else:
            output_old = output_new

        output[..., n] = output_new / w_scale

    return output


def _li_dynamics_bwd(grad_output, output, decay):
    """ """
    if grad_output.is_cuda and not _LIDynamics.DEBUG:
        return Accelerated.leaky_integrator.bwd(
            grad_output.contiguous(), output.contiguous(), decay.contiguous()
        )

    grad_input = torch.zeros_like(grad_output)
    decay = 1 - decay / (1 << 12)

    num_steps = grad_output.shape[-1]

    grad_input[..., num_steps - 1] = grad_output[..., num_steps - 1]

    for n in range(num_steps - 1)[::-1]:
        grad_input[..., n] = decay * grad_input[..., n + 1] \
            + grad_output[..., n]

    grad_decay = grad_input[..., 1:] * output[..., :-1]

    if torch.numel(decay) == 1:  # shared parameters
        grad_decay = torch.sum(grad_decay.flatten(), dim=0, keepdim=True)
    else:
        grad_decay = torch.sum(grad_decay, dim=[0, -1])
        if len(grad_decay.shape) != 1:
            grad_decay = torch.sum(
                grad_decay.reshape(grad_decay.shape[0], -1),
                dim=1
            )

    return grad_input, grad_decay
