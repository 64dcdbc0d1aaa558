#########################################################################
##   This file is part of the auto_LiRPA library, a core part of the   ##
##   alpha-beta-CROWN (alpha,beta-CROWN) neural network verifier.      ##
##                                                                     ##
##   Licensed under the BSD 3-Clause license.                          ##
#########################################################################
import copy
import os
import time
import warnings
from collections import OrderedDict, deque

import numpy as np
import torch
import torch.nn as nn
from torch.nn import Parameter

from .bound_op_map import bound_op_map
from .bound_ops import *
from .bounded_tensor import BoundedTensor, BoundedParameter
from .parse_graph import parse_module
from .perturbations import *
from .utils import logger, unpack_inputs, eyeC, OneHotC, stop_criterion_min
from .patches import Patches
from .cuda_utils import double2float

warnings.simplefilter('once')


class BoundedModule(nn.Module):
    """Bounded module with support for automatically computing bounds.

    Args:
        model (nn.Module): The original model to be wrapped by BoundedModule.

        global_input (tuple): A dummy input to the original model. The shape of
        the dummy input should be consistent with the actual input to the model
        except for the batch dimension.

        bound_opts (dict): Options for bounds. See
        `Bound Options <bound_opts.html>`_.

        device (str or torch.device): Device of the bounded module, e.g. 'cpu'
        or 'cuda'. If 'auto', the device will be automatically inferred from the
        device of parameters in the original model or the dummy input.

        custom_ops (dict): A dictionary of custom operators.
        The dictionary maps operator names to their corresponding bound classes
        (subclasses of `Bound`).
    """
    def __init__(self, model, global_input, bound_opts=None,
                 device='auto', verbose=False, custom_ops=None):
        super().__init__()
        if isinstance(model, BoundedModule):
            for key in model.__dict__.keys():
                setattr(self, key, getattr(model, key))
            return

        self.ori_training = model.training

        if bound_opts is None:
            bound_opts = {}
        # Default options.
        default_bound_opts = {
            'conv_mode': 'patches',
            'sparse_intermediate_bounds': True,
            'sparse_conv_intermediate_bounds': True,
            'sparse_intermediate_bounds_with_ibp': True,
            'sparse_features_alpha': True,
            'sparse_spec_alpha': True,
            'minimum_sparsity': 0.9,
            'enable_opt_interm_bounds': False,
            'crown_batch_size': np.inf,
            'forward_refinement': False,
            'forward_max_dim': int(1e9),
            'use_full_conv_alpha': True,
            'disable_optimization': [],
            'fixed_reducemax_index': False,
            'matmul': {},
            'optimize_bound_args': {},
            'compare_crown_with_ibp': False,
            'forward_before_compute_bounds': False,
            # Release cached GPU memory every N nodes during backward
            # bound propagation (0 disables it). Useful for very deep models.
            'clear_cache_every': 0,
            'double_precision_intermediate': False,
        }
        default_bound_opts.update(bound_opts)
        self.bound_opts = default_bound_opts
        self.verbose = verbose
        self.custom_ops = custom_ops if custom_ops is not None else {}
        if device == 'auto':
            try:
                self.device = next(model.parameters()).device
            except StopIteration:
                # Model has no parameters. We use the device of input tensor.
                self.device = global_input.device
        else:
            self.device = device
        self.conv_mode = self.bound_opts.get('conv_mode', 'patches')
        # Cached IBP results which may be reused
        self.ibp_lower, self.ibp_upper = None, None

        self.optimizable_activations = []
        self.relus = []  # save relu layers for convenience
        self.layers_requiring_bounds = []

        state_dict_copy = copy.deepcopy(model.state_dict())
        object.__setattr__(self, 'ori_state_dict', state_dict_copy)
        model.to(self.device)
        self.final_shape = model(
            *unpack_inputs(global_input, device=self.device)).shape
        self.bound_opts.update({'final_shape': self.final_shape})
        self._convert(model, global_input)
        self._mark_perturbed_nodes()

        # set the default values here
        optimize_bound_args = {
            'enable_alpha_crown': True,  # Enable optimization of alpha.
            'enable_beta_crown': False,  # Enable beta split constraint.
            'iteration': 20,  # Number of alpha/beta optimization iterations.
            'use_shared_alpha': False,  # Use shared alpha.
            'optimizer': 'adam',  # Optimizer used for alpha and beta optimization.
            'keep_best': True,  # Save the best results of alpha/beta/bounds.
            'fix_interm_bounds': True,  # Fix intermediate bounds.
            'lr_alpha': 0.5, 'lr_beta': 0.05, 'lr_cut_beta': 5e-3,
            'init_alpha': True,  # Initialize alpha at the beginning.
            'lr_decay': 0.98,
            'early_stop_patience': 10,
            'start_save_best': 0.5,
            'use_float64_in_last_iteration': False,
            'pruning_in_iteration': False,
            'pruning_in_iteration_threshold': 0.2,
            'multi_spec_keep_func': lambda x: torch.all(x, dim=-1),
        }
        optimize_bound_args.update(
            self.bound_opts.get('optimize_bound_args', {}))
        self.bound_opts.update({'optimize_bound_args': optimize_bound_args})

        self.next_split_hint = []  # Split hints, used in beta optimization.
        # Beta values for all intermediate bounds.
        # Set to None (not used) by default.
        self.best_intermediate_betas = None
        # Initialization value for intermediate betas.
        self.init_intermediate_betas = None
        # whether using cut
        self.cut_used = False
        # a placeholder for cut timestamp, which would be a non-positive int
        self.cut_timestamp = -1

        # List of operators. When we are computing intermediate bounds for these
        # ops, we simply use IBP to propagate bounds from its input nodes,
        # instead of CROWN.
        self.ibp_intermediate = [BoundRelu, BoundNeg, BoundTranspose]

        # a placeholder to save the latest samplewise mask for
        # pruning-in-iteration optimization
        self.last_update_preserve_mask = None

    def nodes(self):
        return self._modules.values()

    def get_enabled_opt_act(self):
        # Optimizable activations that are actually used and perturbed
        return [
            n for n in self.optimizable_activations
            if n.used and n.perturbed and not getattr(n, 'is_linear_op', False)
        ]

    def get_perturbed_optimizable_activations(self):
        return [n for n in self.optimizable_activations if n.perturbed]

    def get_splittable_activations(self):
        """Activation functions that can be split during branch and bound."""
        return [n for n in self.nodes() if n.perturbed and n.splittable]

    def get_layers_requiring_bounds(self):
        """Layer names whose intermediate layer bounds are required."""
        intermediate_layers = []
        for node in self.nodes():
            if node.requires_input_bounds:
                for i in getattr(node, 'requires_input_bounds', []):
                    input_node = node.inputs[i]
                    if input_node.perturbed:
                        intermediate_layers.append(input_node)
        return intermediate_layers

    def check_incompatible_nodes(self, model):
        """Check whether the model has incompatible nodes that the conversion
        may be inaccurate"""
        node_types = [type(m) for m in list(model.modules())]

        if (torch.nn.Dropout in node_types
                and torch.nn.BatchNorm1d in node_types
                and self.global_input.shape[0] == 1):
            print('We cannot support torch.nn.Dropout and torch.nn.BatchNorm1d '
                  'at the same time!')
            print('Suggest to use another dummy input which has batch size '
                  'larger than 1 and set model to train() mode.')
            return

    def non_deter_wrapper(self, op, *args, **kwargs):
        """Some operations are non-deterministic and deterministic mode will
        fail. So we temporary disable it."""
        if self.bound_opts.get('deterministic', False):
            torch.use_deterministic_algorithms(False)
        ret = op(*args, **kwargs)
        if self.bound_opts.get('deterministic', False):
            torch.use_deterministic_algorithms(True)
        return ret

    def non_deter_scatter_add(self, *args, **kwargs):
        return self.non_deter_wrapper(torch.scatter_add, *args, **kwargs)

    def non_deter_index_select(self, *args, **kwargs):
        return self.non_deter_wrapper(torch.index_select, *args, **kwargs)

    def set_bound_opts(self, new_opts):
        for k, v in new_opts.items():
            # assert v is not dict, 'only support change optimize_bound_args'
            if type(v) == dict:
                self.bound_opts[k].update(v)
            else:
                self.bound_opts[k] = v

    def _print_memory(self, msg=''):
        """Debugging helper: report the memory held by the caching allocator."""
        if self.verbose and torch.cuda.is_available():
            allocated = torch.cuda.memory_allocated(self.device) / 2**20
            reserved = torch.cuda.memory_reserved(self.device) / 2**20
            logger.debug('[%s] allocated %.1f MB, reserved %.1f MB',
                         msg, allocated, reserved)

    def _maybe_clear_cache(self, count):
        every = self.bound_opts.get('clear_cache_every', 0)
        if every and count % every == 0:
            torch.cuda.empty_cache()

    def train(self, mode=True):
        super().train(mode)
        for node in self.nodes():
            node.train(mode=mode)

    def eval(self):
        super().eval()
        for node in self.nodes():
            node.eval()

    def to(self, *args, **kwargs):
        # Moves and/or casts some attributes except pytorch will do by default.
        for node in self.nodes():
            for attr in ['lower', 'upper', 'forward_value', 'd', 'lA']:
                if hasattr(node, attr):
                    this_attr = getattr(node, attr)
                    if isinstance(this_attr, torch.Tensor):
                        this_attr = this_attr.to(*args, **kwargs)
                        setattr(node, attr, this_attr)

            if hasattr(node, 'interval'):
                # construct new interval
                this_attr = getattr(node, 'interval')
                setattr(node, 'interval', (this_attr[0].to(*args, **kwargs),
                                           this_attr[1].to(*args, **kwargs)))

        return super().to(*args, **kwargs)

    def __getitem__(self, name):
        module = self._modules[name]
        # We never create modules that are None, the assert fixes type hints
        assert module is not None
        return module

    def final_node(self):
        return self[self.final_name]

    def get_forward_value(self, node):
        """ Recursively get `forward_value` for `node` and its parent nodes"""
        if getattr(node, 'forward_value', None) is not None:
            return node.forward_value
        inputs = [self.get_forward_value(inp) for inp in node.inputs]
        for inp in node.inputs:
            node.from_input = node.from_input or inp.from_input
        node.input_shape = inputs[0].shape if len(inputs) > 0 else None
        fv = node.forward(*inputs)
        if isinstance(fv, (torch.Size, tuple)):
            fv = torch.tensor(fv, device=self.device)
        node.forward_value = fv
        node.output_shape = fv.shape
        # In most cases, the batch dimension is just the first dimension
        # if the node depends on input. Otherwise if the node doesn't
        # depend on input, there is no batch dimension.
        node.batch_dim = 0 if node.from_input else -1
        # Unperturbed node but it is not a root node.
        # Save forward_value to value. (Can be used in forward bounds.)
        if not node.from_input and len(node.inputs) > 0:
            node.value = node.forward_value
        return fv

    def forward(self, *x, final_node_name=None, clear_forward_only=False,
                reset_perturbed_nodes=True):
        r"""Standard forward computation for the network.

        Args:
            x (tuple or None): Input to the model.

            final_node_name (str, optional): The name of the final node in the
            model. The value on the corresponding node will be returned.

            clear_forward_only (bool, default `False`): Whether only standard
            forward values stored on the nodes should be cleared. If `True`,
            only standard forward values stored on the nodes will be cleared.
            Otherwise, bound information on the nodes will also be cleared.

            reset_perturbed_nodes (bool, default `True`): Mark all perturbed
            nodes with input perturbations. When set to `True`, it may
            accidentally clear all .perturbed properties for intermediate
            nodes.

        Returns:
            output: The output of the model, or if `final_node_name` is not
            `None`, return the value on the corresponding node instead.
        """
        self.set_input(*x, clear_forward_only=clear_forward_only,
                       reset_perturbed_nodes=reset_perturbed_nodes)
        if final_node_name:
            return self.get_forward_value(self[final_node_name])
        else:
            out = deque([self.get_forward_value(self[n])
                         for n in self.output_name])

            def _fill_template(template):
                if template is None:
                    return out.popleft()
                elif isinstance(template, (list, tuple)):
                    res = []
                    for t in template:
                        res.append(_fill_template(t))
                    return tuple(res) if isinstance(template, tuple) else res
                elif isinstance(template, dict):
                    res = {}
                    for key in template:
                        res[key] = _fill_template(template[key])
                    return res
                else:
                    raise NotImplementedError

            return _fill_template(self.output_template)

    def set_input(self, *x, interm_bounds=None, clear_forward_only=False,
                  reset_perturbed_nodes=True):
        self._clear_and_set_new(
            interm_bounds=interm_bounds,
            clear_forward_only=clear_forward_only,
            reset_perturbed_nodes=reset_perturbed_nodes)
        inputs_unpacked = unpack_inputs(x)
        for name, index in zip(self.input_name, self.input_index):
            if index is None:
                continue
            node = self[name]
            node.value = inputs_unpacked[index]
            if isinstance(node.value, (BoundedTensor, BoundedParameter)):
                node.perturbation = node.value.ptb
            else:
                node.perturbation = None
        # Mark all perturbed nodes.
        if reset_perturbed_nodes:
            self._mark_perturbed_nodes()

    def _to_interm_precision(self, lb, ub):
        """Round intermediate bounds computed in float64 back to float32,
        rounding lower bounds down and upper bounds up so that the result
        remains sound."""
        if not self.bound_opts.get('double_precision_intermediate', False):
            return lb, ub
        return double2float(lb, 'down'), double2float(ub, 'up')

    def backward_general_interm(self, nodes, C_map, bound_lower=True,
                                bound_upper=True):
        """Compute intermediate bounds for a list of nodes one by one.

        Very large networks (e.g. the ResNets used in VNN-COMP) can exhaust GPU
        memory here, so we optionally release cached blocks between nodes."""
        results = {}
        for count, node in enumerate(nodes, start=1):
            C = C_map[node.name]
            if self.bound_opts.get('double_precision_intermediate', False):
                C = C.to(torch.float64)
            lb, ub = self.backward_general(
                node, C, bound_lower=bound_lower, bound_upper=bound_upper)
            lb, ub = self._to_interm_precision(lb, ub)
            node.lower, node.upper = lb, ub
            results[node.name] = (lb, ub)
            self._maybe_clear_cache(count)
            self._print_memory(f'after {node.name}')
        return results

    def _timed(self, func, *args, **kwargs):
        """Time a bound computation. The wall clock is only meaningful after
        all queued kernels are done, so synchronize before reading it."""
        on_gpu = str(self.device).startswith('cuda')
        if on_gpu:
            torch.cuda.synchronize(self.device)
        start = time.time()
        ret = func(*args, **kwargs)
        if on_gpu:
            torch.cuda.synchronize()
        if self.verbose:
            logger.info('%s finished in %.4fs', func.__name__,
                        time.time() - start)
        return ret

    def save_intermediate(self, save_path=None):
        r"""A function for saving intermediate bounds.

        Please call this function after `compute_bounds`, or it will output
        IBP bounds by default.

        Args:
            save_path (str, default `None`): If `save_path` is not `None`, the
            intermediate bounds will be saved to it (moved to CPU first).
        """
        ret = OrderedDict()
        for node in self.nodes():
            if hasattr(node, 'interval'):
                ret[node.name] = node.interval
            elif node.perturbed and hasattr(node, 'lower'):
                ret[node.name] = (node.lower, node.upper)
        if save_path is not None:
            cpu_ret = {k: (v[0].detach().cpu(), v[1].detach().cpu())
                       for k, v in ret.items()}
            torch.save(cpu_ret, save_path)
        return ret

    def load_intermediate(self, path):
        """Load intermediate bounds saved by `save_intermediate`."""
        saved = torch.load(path, map_location=self.device)
        for name, (lb, ub) in saved.items():
            node = self[name]
            node.lower, node.upper = lb, ub
            node.interval = (lb, ub)
        return saved
