#########################################################################
##   This file is part of the alpha-beta-CROWN verifier              ##
##                                                                     ##
##   Copyright (C) 2021-2024 The alpha-beta-CROWN Team                 ##
##                                                                     ##
##     This program is licensed under the BSD 3-Clause License,        ##
##        contained in the LICENCE file in this directory.             ##
#########################################################################
"""alpha-beta-CROWN verifier interface to handle robustness verification."""

import os
import sys
import gc
import time
import copy
import random
import socket
from collections import defaultdict

import numpy as np
import torch

import arguments
from auto_LiRPA import BoundedModule, BoundedTensor
from auto_LiRPA.perturbations import PerturbationLpNorm
from auto_LiRPA.utils import (stop_criterion_all, stop_criterion_batch_any,
                              reduction_str2func)
from jit_precompile import precompile_jit_kernels
from beta_CROWN_solver import LiRPANet
from lp_mip_solver import mip, check_enable_refinement
from attack import attack
from utils import Logger, print_model, Timer
from specifications import (trim_batch, batch_vnnlib, sort_targets,
                            prune_by_idx, add_rhs_offset)
from loading import load_model_and_vnnlib, parse_run_mode, adhoc_tuning
from batch_branch_and_bound import general_bab
from input_split.batch_branch_and_bound import input_bab_parallel
from cuts.cut_utils import terminate_mip_processes
from read_vnnlib import read_vnnlib


class ABCROWN:
    def __init__(self, args=None, **kwargs):
        args_new = copy.deepcopy(args) if args is not None else sys.argv[1:]
        for k, v in kwargs.items():
            if v is None:
                continue
            args_new.append(f'--{k}')
            if not isinstance(v, bool):
                args_new.append(str(v))
        arguments.Config.parse_config(args_new)
        self.logger = Logger(arguments.Config['general']['results_file'])

    def incomplete_verifier(self, model_ori, data, data_ub=None, data_lb=None,
                            vnnlib=None, interm_bounds=None):
        # Generally, c should be constructed from vnnlib
        assert len(vnnlib) == 1, 'incomplete_verifier only support single x spec'
        input_x, specs = vnnlib[0]
        c_transposed = False
        c = torch.concat([
            item[0] if isinstance(item[0], torch.Tensor) else torch.tensor(item[0])
            for item in specs], dim=0).unsqueeze(1).to(data)
        rhs = torch.tensor(np.array([item[1] for item in specs])).to(data)
        stop_func = stop_criterion_all(rhs)

        model = LiRPANet(model_ori, in_size=data.shape, c=c)

        # Note: the input data_lb and data_ub are in the normalized space.
        ptb = PerturbationLpNorm(norm=arguments.Config['specification']['norm'],
                                 eps=None, x_L=data_lb, x_U=data_ub)
        x = BoundedTensor(data, ptb).to(data_lb.device)
        output = model.net(x).flatten()
        print('Model prediction is:', output)

        # save output:
        if arguments.Config['general']['save_output']:
            arguments.Globals['out']['pred'] = output.cpu()

        ret = model.build(
            None, x, data_lb, data_ub, vnnlib, stop_criterion_func=stop_func,
            interm_bounds=interm_bounds)
        global_lb = ret['global_lb']
        print('initial alpha-CROWN bounds:', global_lb)
        print('Worst class: (+ rhs)', global_lb.min())
        if global_lb.min() >= 0:
            return 'safe-incomplete', ret
        return 'unknown', ret

    def bab(self, data_lb, data_ub, c, rhs, data=None, targets=None,
            vnnlib=None, timeout=None, time_stamp=0, data_dict=None,
            lower_bounds=None, upper_bounds=None, reference_alphas=None,
            attack_images=None, cplex_processes=None,
            activation_opt_params=None, reference_lA=None,
            model_incomplete=None, refined_betas=None,
            create_model=True, model=None, return_domains=False,
            max_iterations=None, property_idx=None, vnnlib_id=None):
        # This will use the refined bounds if the complete verifier is
        # "bab-refine".
        # FIXME do not repeatedly create LiRPANet which creates a new
        # BoundedModule each time.

        # Save these arguments in case that they need to retry verifying this
        # instance with a different batch size.
        input_split = arguments.Config['bab']['branching']['input_split']['enable']
        if create_model:
            model = LiRPANet(self.model_ori, in_size=data_lb.shape, c=c,
                             cplex_processes=cplex_processes,
                             mip_building_proc=None)
            if not input_split:
                model.net.init_slope(
                    (BoundedTensor(data, PerturbationLpNorm(x_L=data_lb, x_U=data_ub)),),
                    share_alphas=arguments.Config['solver']['alpha-crown']['share_alphas'],
                    c=c)
        data = data.to(model.device)
        data_lb, data_ub = data_lb.to(model.device), data_ub.to(model.device)
        norm = arguments.Config['specification']['norm']
        ptb = PerturbationLpNorm(norm=norm, x_L=data_lb, x_U=data_ub)
        x = BoundedTensor(data, ptb).to(data_lb.device)

        if input_split:
            result = input_bab_parallel(
                model, (data_lb, data_ub), x, rhs=rhs, timeout=timeout,
                vnnlib=vnnlib, c=c)
        else:
            result = general_bab(
                model, data_lb, data_ub, c, rhs, x=x, timeout=timeout,
                refined_lower_bounds=lower_bounds,
                refined_upper_bounds=upper_bounds,
                activation_opt_params=activation_opt_params,
                reference_alphas=reference_alphas, reference_lA=reference_lA,
                attack_images=attack_images, vnnlib=vnnlib,
                model_incomplete=model_incomplete,
                refined_betas=refined_betas,
                max_iterations=max_iterations)
        min_lb = result[0]
        if min_lb is None:
            min_lb = -torch.inf
        elif isinstance(min_lb, torch.Tensor):
            min_lb = min_lb.item()
        nb_states = result[2]
        verified_ret = result[3]
        return min_lb, nb_states, verified_ret

    def complete_verifier(self, model_ori, model_incomplete, vnnlib, batched_vnnlib,
                          vnnlib_shape, index, timeout_threshold, bab_ret=None,
                          cplex_processes=None, reference_alphas_cp=None,
                          attack_images=None, c=None):
        start_time = time.time()
        cplex_cuts = (arguments.Config['bab']['cut']['enabled']
                      and arguments.Config['bab']['cut']['cplex_cuts'])
        sort_targets_by_lb = arguments.Config['bab']['sort_targets']
        bab_attack_enabled = arguments.Config['bab']['attack']['enabled']

        if arguments.Config['general']['enable_incomplete_verification']:
            init_global_lb = model_incomplete.global_lb
            init_global_ub = model_incomplete.global_ub
            if sort_targets_by_lb:
                batched_vnnlib = sort_targets(
                    batched_vnnlib, init_global_lb, init_global_ub,
                    attack_images=attack_images, model_incomplete=model_incomplete)

        solved_c_rows = []
        for property_idx, properties in enumerate(batched_vnnlib):  # loop of x
            # batched_vnnlib: [x, [(c, rhs, y, pidx)]]
            print(f'\nProperties batch {property_idx}, size {len(properties[0])}')
            timeout = timeout_threshold - (time.time() - start_time)
            print(f'Remaining timeout: {timeout}')
            start_time_bab = time.time()

            x_range = torch.tensor(properties[0], dtype=torch.get_default_dtype())
            data_min = x_range.select(-1, 0).reshape(vnnlib_shape)
            data_max = x_range.select(-1, 1).reshape(vnnlib_shape)
            x = x_range.mean(-1).reshape(vnnlib_shape)  # only the shape of x is important.

            target_label_arrays = list(properties[1])  # properties: (c, rhs, y, pidx)
            assert len(target_label_arrays) == 1
            c, rhs, y, pidx = target_label_arrays[0]

            if bab_attack_enabled:
                if arguments.Config['bab']['initial_max_domains'] != 1:
                    raise ValueError(
                        'To run Bab-attack, please set initial_max_domains to 1. '
                        f'Currently it is {arguments.Config["bab"]["initial_max_domains"]}.')
                # Attack images has shape (batch, restarts, specs, c, h, w).
                # The specs dimension should already be sorted.
                # Reshape it to (restarts, c, h, w) for this specification.
                this_spec_attack_images = attack_images[:, :, property_idx].view(
                    attack_images.size(1), *attack_images.shape[3:])
            else:
                this_spec_attack_images = None

            if arguments.Config['general']['enable_incomplete_verification']:
                # extract lower bound by (sorted) init_global_lb and batch size
                # of initial_max_domains
                start_idx = property_idx * arguments.Config['bab']['initial_max_domains']
                end_idx = min(start_idx + arguments.Config['bab']['initial_max_domains'],
                              len(init_global_lb))
                lb_this = init_global_lb[start_idx:end_idx]
                print('Initial alpha-CROWN with the current spec:', lb_this)

            l, nodes, ret = self.bab(
                data=x, targets=y, time_stamp=time.time(), data_ub=data_max,
                data_lb=data_min, c=torch.tensor(c, dtype=torch.get_default_dtype()),
                rhs=torch.tensor(rhs, dtype=torch.get_default_dtype()),
                vnnlib=vnnlib, timeout=timeout, attack_images=this_spec_attack_images,
                cplex_processes=cplex_processes, property_idx=property_idx,
                model_incomplete=model_incomplete)
            bab_time = time.time() - start_time_bab
            print(f'BaB for property {property_idx} took {bab_time:.4f}s')

            if ret == 'unsafe':
                return 'unsafe-bab'
            if ret == 'unknown':
                return 'unknown'
            solved_c_rows.append(c)
            # free the GPU memory held by the finished property before the next
            del ret
            torch.cuda.empty_cache()  # release the memory of this property
        return 'safe'

    def main(self, interm_bounds=None):
        print(f'Experiments at {time.ctime()} on {socket.gethostname()}')
        torch.manual_seed(arguments.Config['general']['seed'])
        random.seed(arguments.Config['general']['seed'])
        np.random.seed(arguments.Config['general']['seed'])
        torch.set_printoptions(precision=8)
        device = arguments.Config['general']['device']
        if device != 'cpu':
            torch.cuda.manual_seed_all(arguments.Config['general']['seed'])
            # Always disable TF32 (precision is too low for verification).
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False

        if arguments.Config['general']['deterministic']:
            os.environ['CUBLAS_WORKSPACE_CONFIG'] = ':4096:8'
            torch.use_deterministic_algorithms(True)
        if arguments.Config['general']['double_fp']:
            torch.set_default_dtype(torch.float64)
        if arguments.Config['general']['precompile_jit']:
            precompile_jit_kernels()

        bab_args = arguments.Config['bab']
        timeout_threshold = bab_args['timeout']
        select_instance = arguments.Config['data']['select_instance']
        (run_mode, save_path, file_root, example_idx_list, model_ori,
         vnnlib_all, shape) = parse_run_mode()
        self.logger.update_timeout(timeout_threshold)

        if arguments.Config['general']['complete_verifier'] == 'bab-refine':
            self.mip_building_proc = None
        else:
            self.mip_building_proc = None

        for new_idx, csv_item in enumerate(example_idx_list):
            arguments.Globals['example_idx'] = new_idx
            vnnlib_id = new_idx + arguments.Config['data']['start']
            # Select some instances to verify
            if select_instance and not vnnlib_id in select_instance:
                continue
            self.logger.record_start_time()

            print(f'\n {"%"*35} idx: {new_idx}, vnnlib ID: {vnnlib_id} {"%"*35}')
            if arguments.Config['general']['save_output']:
                arguments.Globals['out']['idx'] = new_idx  # saved for test

            onnx_path = None
            if run_mode != 'customized_data':
                if len(csv_item) == 3:
                    # model, vnnlib, timeout
                    model_ori, shape, vnnlib, onnx_path = load_model_and_vnnlib(
                        file_root, csv_item)
                    arguments.Config['model']['onnx_path'] = os.path.join(file_root, csv_item[0])
                    arguments.Config['specification']['vnnlib_path'] = os.path.join(
                        file_root, csv_item[1])
                else:
                    # Each line contains only 1 item, which is the vnnlib spec.
                    vnnlib = read_vnnlib(os.path.join(file_root, csv_item[0]))
                    assert arguments.Config['model']['input_shape'] is not None, (
                        'vnnlib does not have shape information, '
                        'please specify by --input_shape')
                    shape = arguments.Config['model']['input_shape']
            else:
                vnnlib = vnnlib_all[new_idx]  # vnnlib_all is a list of all standard vnnlib

            # Skip running the actual verifier during preparation.
            if arguments.Config['general']['prepare_only']:
                continue

            bab_args['timeout'] = float(bab_args['timeout'])
            if bab_args['timeout_scale'] != 1:
                new_timeout = bab_args['timeout'] * bab_args['timeout_scale']
                print(f'Scaling timeout: {bab_args["timeout"]} -> {new_timeout}')
                bab_args['timeout'] = new_timeout
            timeout_threshold = bab_args['timeout']
            self.logger.update_timeout(timeout_threshold)

            model_ori.eval()
            vnnlib_shape = shape

            x_range = torch.tensor(vnnlib[0][0])
            data_min = x_range.select(-1, 0).reshape(vnnlib_shape)
            data_max = x_range.select(-1, 1).reshape(vnnlib_shape)
            x = x_range.mean(-1).reshape(vnnlib_shape)  # only the shape of x is important.
            adhoc_tuning(data_min, data_max, model_ori)

            model_ori = model_ori.to(device)
            x, data_max, data_min = x.to(device), data_max.to(device), data_min.to(device)
            self.model_ori = model_ori

            verified_status, verified_success = 'unknown', False
            model_incomplete = ret = None

            if device != 'cpu':
                torch.cuda.synchronize()
            start_time = time.time()
            if arguments.Config['attack']['pgd_order'] == 'before':
                verified_status, ret = attack(
                    model_ori, x, vnnlib, verified_status, verified_success)
                verified_success = verified_status != 'unknown'
                attack_images = ret.get('attack_images', None) if ret else None
            else:
                attack_images = None

            # Incomplete verification is enabled by default. The intermediate
            # lower and upper bounds will be reused in bab and mip.
            if (not verified_success and (
                    arguments.Config['general']['enable_incomplete_verification']
                    or arguments.Config['general']['complete_verifier'] == 'bab-refine')):
                verified_status, ret = self.incomplete_verifier(
                    model_ori, x, data_ub=data_max, data_lb=data_min,
                    vnnlib=vnnlib, interm_bounds=interm_bounds)
                verified_success = verified_status != 'unknown'
                model_incomplete = ret.get('model', None)

            if not verified_success and arguments.Config['general']['complete_verifier'] != 'skip':
                batched_vnnlib = batch_vnnlib(vnnlib)
                verified_status = self.complete_verifier(
                    model_ori, model_incomplete, vnnlib, batched_vnnlib, vnnlib_shape,
                    new_idx, bab_ret=None, cplex_processes=None,
                    timeout_threshold=timeout_threshold - (time.time() - self.logger.start_time),
                    attack_images=attack_images)

            if device != 'cpu':
                torch.cuda.synchronize()  # wait for queued kernels before reading the clock
            verify_time = time.time() - start_time
            peak_mem = torch.cuda.max_memory_allocated() / 2 ** 30
            print(f'Result: {verified_status} in {verify_time:.4f} seconds, '
                  f'peak GPU memory {peak_mem:.2f} GB')
            torch.cuda.reset_peak_memory_stats()

            if (bab_args['cut']['enabled'] and bab_args['cut']['cplex_cuts']
                    and self.mip_building_proc is not None):
                terminate_mip_processes(self.mip_building_proc, None)
            del ret
            del model_incomplete
            gc.collect()
            torch.cuda.empty_cache()

            self.logger.summarize_results(verified_status, new_idx)

        # Finalize the results.
        self.logger.finish()
        return self.logger.verification_summary


if __name__ == '__main__':
    abcrown = ABCROWN(args=sys.argv[1:])
    abcrown.main()
