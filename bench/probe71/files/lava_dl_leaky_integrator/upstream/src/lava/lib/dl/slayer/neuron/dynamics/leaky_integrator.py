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
    """ """
    # This provides a static handle to jit cuda accelerated module
    # They are callable as
    # Accelerated.leaky_integrator.dynamics(...) -> handles autograd
    # Accelerated.leaky_integrator.fwd(...)
    # Accelerated.leaky_integrator.bwd(...)
    module = None

    @staticproperty
    def leaky_integrator():
        """ """
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
            if jitconfig.TORCH_CUDA_ARCH_LIST is not None:
                os.environ['TORCH_CUDA_ARCH_LIST'] = \
                    jitconfig.TORCH_CUDA_ARCH_LIST
            Accelerated.module = load(
                name='dynamics',
                sources=[
                    os.path.dirname(os.path.abspath(__file__))
                    + '/leaky_integrator.cu'
                ],
                extra_cuda_cflags=['--use_fast_math'],
                verbose=jitconfig.VERBOSE,
            )
        return Accelerated.module


def dynamics(input, decay, state, threshold, w_scale, debug=False):
    """Leaky integrator dynamics. It automatically switches
    between CUDA and CPU implementation depending on available hardware.

    .. math::
        y[t] &= (1 - \\alpha)\\,y[t-1] + x[t] \\

        \\text{if } y[t] &> \\vartheta:\\
        y[t] &= 0

    Parameters
    ----------
    input : torch tensor
        input tensor.
    decay : torch tensor
        decay tensor. Note: it is unscaled integer value here.
    state : torch tensor
        dynamics state.
    threshold : float
        neuron threshold. Negative value means no threshold.
    w_scale : int
        parameter scaling for integer calculations.
    debug : bool, optional
        enable/disable debug mode. Default is False.

    Returns
    -------
    torch tensor
        leaky integrator output.

    Note
    ----
    For threshold less than zero, the dynamics is a leaky integrator without
    reset, otherwise it is a leaky integrate-and-fire with reset to zero.
    """
    if input.is_cuda and debug is False:
        output = Accelerated.leaky_integrator.dynamics(
            input.contiguous(), decay.contiguous(), state.contiguous(),
            threshold, w_scale
        )
    else:
        output = _LIDynamics.apply(input, decay, state, threshold, w_scale)

    return output


def persistent_state(state, spike):
    """Handles persistent state update."""
    if spike.ndim == state.ndim:
        return state
    return state[..., -1] if spike.shape[-1] > 0 else state


class _LIDynamics(torch.autograd.Function):
    """ """
    @staticmethod
    def forward(ctx, input, decay, state, threshold, w_scale):
        """ """
        output = _li_dynamics_fwd(
            input, decay=decay, state=state,
            threshold=threshold, w_scale=w_scale,
        )

        if _LIDynamics.debug:
            # Validate the python implementation against the CUDA kernel when it is available.
            if torch.cuda.is_available():
                _output = Accelerated.leaky_integrator.fwd(
                    input.cuda(), decay.cuda(), state.cuda(),
                    threshold, w_scale
                ).cpu()
                error = (output.cpu() - _output).abs().max().item()
                if error > 1e-6:
                    print(f'Leaky integrator fwd mismatch: {error=}')

        ctx.save_for_backward(output, decay)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        """ """
        output, decay = ctx.saved_tensors

        grad_input, grad_decay = _li_dynamics_bwd(grad_output, output, decay)

        return grad_input, grad_decay, None, None, None, None

    debug = False


def _li_dynamics_fwd(
    input, decay, state, threshold, w_scale, dtype=torch.int32
):
    """ """
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
    grad_input = torch.zeros_like(grad_output)
    decay = 1 - decay / (1 << 12)

    num_steps = grad_output.shape[-1]

    grad_input[..., num_steps - 1] = grad_output[..., num_steps - 1]

    for n in range(num_steps - 1)[::-1]:
        grad_input[..., n] = decay * grad_input[..., n + 1] \
            + grad_output[..., n]

    grad_decay = grad_input[..., 1:] * output[..., :-1]

    if torch.FloatTensor(decay).numel() == 1:  # shared parameters
        grad_decay = torch.sum(grad_decay.flatten(), dim=0, keepdim=True)
    else:
        grad_decay = torch.sum(grad_decay, dim=[0, -1])
        if len(grad_decay.shape) != 1:
            grad_decay = torch.sum(
                grad_decay.reshape(grad_decay.shape[0], -1),
                dim=1
            )

    return grad_input, grad_decay
