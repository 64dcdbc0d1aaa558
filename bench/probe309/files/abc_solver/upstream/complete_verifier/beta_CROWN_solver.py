#########################################################################
##   This file is part of the alpha-beta-CROWN verifier              ##
##                                                                     ##
##   Copyright (C) 2021-2024 The alpha-beta-CROWN Team                 ##
##                                                                     ##
##     This program is licensed under the BSD 3-Clause License,        ##
##        contained in the LICENCE file in this directory.             ##
#########################################################################
"""LiRPANet: the bound solver wrapper used by branch and bound."""
import copy
import time
from collections import OrderedDict

import numpy as np
import torch
import torch.nn as nn

import arguments
from auto_LiRPA import BoundedModule, BoundedTensor
from auto_LiRPA.perturbations import PerturbationLpNorm
from auto_LiRPA.bound_ops import BoundRelu, BoundOptimizableActivation
from auto_LiRPA.utils import (stop_criterion_batch_any, multi_spec_keep_func_all,
                              reduction_str2func, Flatten)
from utils import fast_hist_copy, check_memory_usage


class LiRPANet:
    def __init__(self, model_ori, in_size, c=None, device=None,
                 cplex_processes=None, mip_building_proc=None):
        """
        convert pytorch model to auto_LiRPA module
        """
        net = copy.deepcopy(model_ori)
        layers = list(net.children())
        self.c = c
        self.model_ori = model_ori
        self.layers = layers
        self.input_shape = in_size
        self.device = device or arguments.Config['general']['device']
        self.net = BoundedModule(
            net, torch.zeros(in_size, device=self.device),
            bound_opts={
                'deterministic': arguments.Config['general']['deterministic'],
                'conv_mode': arguments.Config['general']['conv_mode'],
                'sparse_features_alpha': arguments.Config['general']['sparse_alpha'],
                'sparse_spec_alpha': arguments.Config['general']['sparse_alpha'],
                'sparse_intermediate_bounds': arguments.Config['general']['sparse_interm'],
                'crown_batch_size': arguments.Config['solver']['crown'].get('batch_size', 1e9)
                if 'crown' in arguments.Config['solver'] else 1e9,
                'max_crown_size': arguments.Config['solver'].get('max_crown_size', 1e9),
                'forward_refinement': False,
                'optimize_bound_args': {
                    'apply_output_constraints_to': [],
                    'tighten_input_bounds': False,
                    'directly_optimize': [],
                    'use_shared_alpha': arguments.Config['solver']['alpha-crown']['share_alphas'],
                    'lr_alpha': arguments.Config['solver']['alpha-crown']['lr_alpha'],
                    'iteration': arguments.Config['solver']['alpha-crown']['iteration'],
                    'early_stop_patience': arguments.Config['solver'].get('early_stop_patience', 10),
                    'start_save_best': arguments.Config['solver'].get('start_save_best', 0.5),
                    'use_float64_in_last_iteration': arguments.Config['solver'].get(
                        'use_float64_in_last_iteration', False),
                },
            },
            device=self.device
        )
        self.net.eval()
        self.needed_A_dict = None
        self.pool = None   # For multi-process.
        self.pool_result = None
        self.pool_termination_flag = None
        self.cplex_processes = cplex_processes
        self.mip_building_proc = mip_building_proc

        # check conversion correctness
        dummy = torch.randn(in_size, device=self.device)
        try:
            assert torch.allclose(net(dummy), self.net(dummy), 1e-4, 1e-5)
        except AssertionError:
            print('torch allclose failed: norm '
                  f'{torch.norm(net(dummy) - self.net(dummy))}')

        # Pinned host buffers used to move A matrices off the GPU without
        # blocking the stream (see get_lA).
        self._lA_host_buffers = {}

    def get_lower_bound(self, domains, split, decision_thresh=None,
                        fix_interm_bounds=True, shortcut=False, stop_criterion_func=None,
                        multi_spec_keep_func=None, beta=None, cut=None,
                        enable_opt_interm_bounds=False, beta_bias=True):
        """Get the lower bound of the domains after the given split."""
        if stop_criterion_func is None:
            stop_criterion_func = stop_criterion_batch_any(decision_thresh)
        if multi_spec_keep_func is None:
            multi_spec_keep_func = multi_spec_keep_func_all
        start = time.time()

        lower_bounds, upper_bounds = domains['lower_bounds'], domains['upper_bounds']
        alphas, betas = domains.get('alphas', None), domains.get('betas', None)
        cs = domains['cs']
        thresholds = domains['thresholds']
        x_Ls, x_Us = domains['x_Ls'], domains['x_Us']
        batch = len(cs)

        ret = self.update_bounds(
            cs=cs, lower_bounds=lower_bounds, upper_bounds=upper_bounds,
            alphas=alphas, betas=betas, x_Ls=x_Ls, x_Us=x_Us, split=split,
            decision_thresh=thresholds, stop_criterion_func=stop_criterion_func,
            multi_spec_keep_func=multi_spec_keep_func, shortcut=shortcut,
            fix_interm_bounds=fix_interm_bounds)

        if arguments.Config['solver'].get('auto_enlarge_batch_size', False):
            check_memory_usage(self.device)
        print(f'get_lower_bound for {batch} domains took {time.time() - start:.4f}s')
        return ret

    def update_bounds(self, cs, lower_bounds, upper_bounds, alphas, betas,
                      x_Ls, x_Us, split, decision_thresh, stop_criterion_func,
                      multi_spec_keep_func, shortcut=False, fix_interm_bounds=True):
        batch = len(cs)
        ptb = PerturbationLpNorm(norm=arguments.Config['specification']['norm'],
                                 x_L=x_Ls, x_U=x_Us)
        new_x = BoundedTensor(x_Ls, ptb)
        self.net.set_bound_opts({
            'optimize_bound_args': {
                'enable_beta_crown': betas is not None,
                'fix_interm_bounds': fix_interm_bounds,
                'iteration': arguments.Config['solver']['beta-crown']['iteration'],
                'lr_beta': arguments.Config['solver']['beta-crown']['lr_beta'],
                'stop_criterion_func': stop_criterion_func,
                'multi_spec_keep_func': multi_spec_keep_func,
            }})
        if alphas is not None:
            self.set_alpha(alphas)
        if betas is not None:
            self.set_beta(betas, split)

        interm_bounds = {k: [lower_bounds[k], upper_bounds[k]] for k in lower_bounds}
        with torch.no_grad() if shortcut else torch.enable_grad():
            lb, ub = self.net.compute_bounds(
                x=(new_x,), C=cs, method='CROWN-Optimized' if not shortcut else 'backward',
                interm_bounds=interm_bounds, bound_upper=False,
                decision_thresh=decision_thresh)
        lA = self.get_lA(batch)
        new_lower, new_upper = self.get_candidate(batch)
        return {
            'lower_bounds': new_lower, 'upper_bounds': new_upper,
            'global_lb': lb, 'global_ub': ub, 'lA': lA,
            'alphas': self.get_alpha() if alphas is not None else None,
            'betas': self.get_beta() if betas is not None else None,
        }

    def _host_buffer(self, name, like):
        """Return a page-locked CPU buffer with the shape/dtype of `like`,
        reusing it across calls."""
        buf = self._lA_host_buffers.get(name)
        if buf is None or buf.shape != like.shape or buf.dtype != like.dtype:
            buf = torch.empty(like.shape, dtype=like.dtype, pin_memory=True)
            self._lA_host_buffers[name] = buf
        return buf

    def get_lA(self, batch, to_cpu=True):
        """Collect the lA matrices of every splittable activation. They can be
        huge, so by default they are copied asynchronously to pinned host
        memory and the stream is synchronized once at the end."""
        lAs = OrderedDict()
        for node in self.net.get_splittable_activations():
            lA = getattr(node, 'lA', None)
            if lA is None:
                continue
            if to_cpu:
                host = self._host_buffer(node.name, lA)
                host.copy_(lA, non_blocking=True)
                lAs[node.name] = host
            else:
                lAs[node.name] = lA
        if to_cpu:
            torch.cuda.current_stream().synchronize()
        return lAs

    def get_candidate(self, batch):
        lower_bounds = OrderedDict()
        upper_bounds = OrderedDict()
        for node in self.net.get_layers_requiring_bounds():
            lower_bounds[node.name] = node.lower.detach()
            upper_bounds[node.name] = node.upper.detach()
        return lower_bounds, upper_bounds

    def get_alpha(self, only_final=False, half=False, device=None):
        # alpha has size (2, spec, batch, *shape). When we save it,
        # we make batch dimension the first.
        # spec is some intermediate layer neurons, or output spec size.
        ret = {}
        for m in self.net.perturbed_optimizable_activations:
            ret[m.name] = {}
            for spec_name, alpha in m.alpha.items():
                if not only_final or spec_name in self.net.final_name:
                    ret[m.name][spec_name] = alpha.detach().transpose(0, 2)
                    if half:
                        ret[m.name][spec_name] = ret[m.name][spec_name].half()
                    if device is not None:
                        ret[m.name][spec_name] = ret[m.name][spec_name].to(
                            device, non_blocking=True)
        return ret

    def set_alpha(self, alphas, set_all=False):
        spec_name = self.net.final_name
        for m in self.net.perturbed_optimizable_activations:
            for spec_name in list(m.alpha.keys()):
                if spec_name in alphas[m.name]:
                    m.alpha[spec_name] = alphas[m.name][spec_name].transpose(
                        0, 2).to(self.device, non_blocking=True).requires_grad_()

    def get_beta(self):
        return [m.sparse_betas for m in self.net.splittable_activations
                if hasattr(m, 'sparse_betas')]

    def set_beta(self, betas, split):
        for m, b in zip(self.net.splittable_activations, betas):
            m.sparse_betas = b

    def build(self, init_bounds, x, data_lb, data_ub, vnnlib, stop_criterion_func=None,
              interm_bounds=None):
        """Run the initial alpha-CROWN and keep the resulting bounds, alphas and
        lA matrices as the root of branch and bound."""
        share_alphas = arguments.Config['solver']['alpha-crown']['share_alphas']
        self.x = x
        self.input_domain = [data_lb, data_ub]
        self.net.init_alpha((x,), share_alphas=share_alphas, c=self.c)
        self.net.set_bound_opts({'optimize_bound_args': {
            'stop_criterion_func': stop_criterion_func,
            'iteration': arguments.Config['solver']['alpha-crown']['iteration'],
            'lr_alpha': arguments.Config['solver']['alpha-crown']['lr_alpha'],
        }})
        torch.cuda.reset_peak_memory_stats()
        global_lb, global_ub = self.net.compute_bounds(
            x=(x,), C=self.c, method='CROWN-Optimized', bound_upper=False,
            interm_bounds=interm_bounds)
        mem = torch.cuda.max_memory_allocated() / 2 ** 20
        print(f'alpha-CROWN peak memory: {mem:.1f} MB')

        lA = self.get_lA(global_lb.shape[0])
        lower_bounds, upper_bounds = self.get_candidate(global_lb.shape[0])
        # Keep a CPU copy of the alphas to save GPU memory during BaB.
        alphas = self.get_alpha(device='cpu')
        return {
            'model': self, 'global_lb': global_lb, 'global_ub': global_ub,
            'lower_bounds': lower_bounds, 'upper_bounds': upper_bounds,
            'alphas': alphas, 'lA': lA,
        }
