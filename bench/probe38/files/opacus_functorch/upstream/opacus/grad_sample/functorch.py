#!/usr/bin/env python3
# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.

"""
Generic per-sample gradient computation for layers that have no hand-written
grad sampler. The layer is made functional once, and every backward hook then
vmaps ``grad`` of a one-sample loss over the batch dimension.

This is slower and uses more accelerator memory than the einsum-based samplers
in ``opacus/grad_sample/*.py``; it exists so that *any* layer can be trained.
"""

import copy
from typing import Dict

import torch
import torch.nn as nn
from opacus.layers.dp_rnn import RNNLinear
from torch.func import functional_call, grad, vmap


def make_functional(mod: nn.Module, disable_autograd_tracking: bool = False):
    """
    Helper that mimics the deprecated ``functorch.make_functional``: returns a
    stateless callable and the parameter values, in registration order.
    """
    params_names = [name for name, _ in mod.named_parameters()]
    params_values = tuple(mod.parameters())
    if disable_autograd_tracking:
        params_values = tuple(p.detach() for p in params_values)

    # A "meta" copy carries the structure without duplicating the weights.
    stateless_mod = copy.deepcopy(mod)
    stateless_mod.to("meta")

    def fmodel(new_params_values, *args, **kwargs):
        new_params_dict = {
            name: value for name, value in zip(params_names, new_params_values)
        }
        return functional_call(stateless_mod, new_params_dict, args, kwargs)

    return fmodel, params_values


def prepare_layer(layer: nn.Module, batch_first: bool = True) -> None:
    """
    Prepares a layer to compute per-sample gradients using functorch.
    The result is cached on the layer as ``layer.ft_compute_sample_grad``.
    """
    if len(list(layer.buffers())) > 0:
        raise NotImplementedError(
            "This layer has buffers and is not supported by Opacus"
        )
    if type(layer) is nn.EmbeddingBag:
        raise NotImplementedError("Functorch does not support EmbeddingBag yet")

    flayer, _ = make_functional(layer)

    def compute_loss_stateless_model(params, activations, backprops):
        if batch_first or type(layer) is RNNLinear:
            batched_activations = activations.unsqueeze(0)
            batched_backprops = backprops.unsqueeze(0)
        else:
            # If batch_first is False, the batch dimension is the second dimension
            batched_activations = activations.unsqueeze(1)
            batched_backprops = backprops.unsqueeze(1)

        output = flayer(params, batched_activations)
        loss = (output * batched_backprops).sum()
        return loss

    ft_compute_grad = grad(compute_loss_stateless_model)
    # Note that the vmap is done on the first dimension, regardless of batch_first
    # This is because the activations and backprops given by the GradSampleModule
    # are always batch_first=True
    layer.ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, 0, 0))


def ft_compute_per_sample_gradient(
    layer: nn.Module, activations, backprops
) -> Dict[nn.Parameter, torch.Tensor]:
    """
    Compute the per-sample gradient of the layer.

    Args:
        layer: the layer on which to compute the gradient
        activations: the input to the layer
        backprops: the gradient of the loss w.r.t. outputs of the layer
    """
    parameters = list(layer.parameters(recurse=True))
    if not hasattr(layer, "ft_compute_sample_grad"):
        prepare_layer(layer)

    per_sample_grads = layer.ft_compute_sample_grad(
        parameters, activations[0], backprops
    )

    ret = {}
    for i_p, p in enumerate(parameters):
        ret[p] = per_sample_grads[i_p]

    return ret


def ft_chunked_per_sample_gradient(
    layer: nn.Module, activations, backprops, chunk_size: int = 64
) -> Dict[nn.Parameter, torch.Tensor]:
    """
    Same as ``ft_compute_per_sample_gradient`` but processes the batch in chunks so
    that very wide layers fit in GPU memory. Chunks are concatenated on the device
    of the incoming activations.
    """
    parameters = list(layer.parameters(recurse=True))
    if not hasattr(layer, "ft_compute_sample_grad"):
        prepare_layer(layer)

    x = activations[0]
    outs = [[] for _ in parameters]
    for start in range(0, x.shape[0], chunk_size):
        chunk = layer.ft_compute_sample_grad(
            parameters,
            x[start : start + chunk_size],
            backprops[start : start + chunk_size],
        )
        for i_p, g in enumerate(chunk):
            outs[i_p].append(g.to(x.device))

    return {p: torch.cat(outs[i_p], dim=0) for i_p, p in enumerate(parameters)}
