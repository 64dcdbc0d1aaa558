#########################################################################
##   This file is part of the alpha-beta-CROWN verifier              ##
##                                                                     ##
##   Copyright (C) 2021-2024 The alpha-beta-CROWN Team                 ##
##                                                                     ##
##     This program is licensed under the BSD 3-Clause License,        ##
##        contained in the LICENCE file in this directory.             ##
#########################################################################
"""Branch and bound for activation space split."""
import time
import numpy as np
import torch
import copy
from collections import defaultdict

from auto_LiRPA.utils import (stop_criterion_batch_any, multi_spec_keep_func_all,
                              AutoBatchSize)
from auto_LiRPA.bound_ops import (BoundInput)
import arguments
from utils import print_splitting_decisions, print_average_branching_neurons, Timer
from branching_domains import BatchedDomainList, select_batch
from branching_heuristics import get_branching_heuristic
from attack.domains import SortedReLUDomainList
from attack.bab_attack import beam_mip_attack, find_promising_domains, bab_loop_attack
from cuts.cut_verification import cut_verification, get_impl_params
from cuts.infered_cuts import BICCOS


Visited, Solve_slope, storage_depth = 0, False, 0


class BaBStats:
    """Counters shared across one run of branch and bound."""
    def __init__(self):
        self.visited = 0
        self.all_node_split = False
        self.oom_count = 0
        self.timer = Timer()


def _is_oom(e):
    """Whether the exception is an out-of-memory error of the GPU caching
    allocator (as opposed to e.g. a shape mismatch)."""
    if isinstance(e, torch.cuda.OutOfMemoryError):
        return True
    return isinstance(e, RuntimeError) and 'CUDA out of memory' in str(e)


def split_domain(net, domains, d, batch, impl_params=None, stats=None,
                 set_init_alpha=False, fix_interm_bounds=True,
                 branching_decision=None):
    solver_args = arguments.Config['solver']
    bab_args = arguments.Config['bab']
    branch_args = bab_args['branching']
    min_batch_size = min(
        solver_args['min_batch_size_ratio'] * solver_args['batch_size'], batch)
    stats.timer.start('pickout')
    batch = min(batch, len(d))
    if stats.visited == 0:
        print(f'Initial domain count: {len(d)}')
    # Pick out a batch of domains from the domain list.
    pickout_batch = max(batch, 1)
    domains_ = d.pick_out(pickout_batch, device=net.x.device)
    stats.timer.add('pickout')

    # Branching heuristic.
    stats.timer.start('decision')
    branching_heuristic = get_branching_heuristic(net)
    split_depth = 1
    if len(d) < min_batch_size:
        split_depth = max(1, int(np.log(min_batch_size / max(1, len(d))) // np.log(2)))
    branching_decision, branching_points, split_depth = (
        branching_heuristic.get_branching_decisions(
            domains_, split_depth, method=branch_args['method'],
            branching_candidates=branch_args['candidates'],
            branching_reduceop=branch_args['reduceop']))
    if len(domains_['lower_bounds'][net.final_name]) == 0:
        return [], 0
    stats.timer.add('decision')

    stats.timer.start('solve')
    split = {'decision': branching_decision, 'points': branching_points}
    ret = net.get_lower_bound(
        domains_, split, fix_interm_bounds=fix_interm_bounds,
        decision_thresh=domains_['thresholds'])
    stats.timer.add('solve')

    stats.timer.start('add')
    d.add(ret, domains_['depths'] + 1, check_infeasibility=not fix_interm_bounds)
    stats.timer.add('add')
    stats.visited += len(domains_['cs']) * 2
    return ret['global_lb'], len(domains_['cs'])


def bab_step_with_retry(net, domains, d, batch, stats, **kwargs):
    """Run one BaB step. When the batch does not fit into GPU memory, free the
    cache and retry with half of the batch size instead of crashing."""
    while True:
        try:
            return split_domain(net, domains, d, batch, stats=stats, **kwargs), batch
        except RuntimeError as e:
            if not _is_oom(e) or batch <= 1:
                raise
            stats.oom_count += 1
            new_batch = max(1, batch // 2)
            print(f'Out of GPU memory with batch size {batch}; '
                  f'retrying with {new_batch}')
            d.restore_picked_out()
            torch.cuda.empty_cache()  # give the fragments back before retrying
            batch = new_batch


def general_bab(net, domain, x, refined_lower_bounds=None,
                refined_upper_bounds=None, activation_opt_params=None,
                reference_alphas=None, reference_lA=None, attack_images=None,
                timeout=None, max_iterations=None, refined_betas=None, rhs=0,
                model_incomplete=None, time_stamp=0, property_idx=None,
                vnnlib=None, c=None, data_lb=None, data_ub=None, **kwargs):
    # the crown_lower/upper_bounds are present for initializing the unstable
    # indx when constructing bounded module
    # it is ok to not pass them when building the bounded module
    start_time = time.time()
    stats = BaBStats()
    solver_args = arguments.Config['solver']
    bab_args = arguments.Config['bab']
    timeout = timeout or bab_args['timeout']
    max_domains = bab_args['max_domains']
    batch = solver_args['batch_size']
    auto_batch = solver_args.get('auto_enlarge_batch_size', False)
    max_iterations = max_iterations or bab_args.get('max_iterations', -1)

    if refined_lower_bounds is None or refined_upper_bounds is None:
        assert arguments.Config['general']['enable_incomplete_verification'] is False
        global_lb, ret = net.build(
            None, x, data_lb, data_ub, vnnlib,
            stop_criterion_func=stop_criterion_batch_any(rhs))
        updated_mask, lA, alpha = (ret['mask'], ret['lA'], ret['alphas'])
        global_ub = global_lb + torch.inf
    else:
        ret = {'lower_bounds': refined_lower_bounds,
               'upper_bounds': refined_upper_bounds}
        global_lb = refined_lower_bounds[net.final_name]
        global_ub = refined_upper_bounds[net.final_name]
        lA, alpha = reference_lA, reference_alphas

    # Transfer A_saved to the new LiRPANet
    if bab_args['cut']['enabled'] and getattr(net, 'A_saved', None) is not None:
        net.net.A_saved = net.A_saved

    thresholds = rhs.to(global_lb.device) if isinstance(rhs, torch.Tensor) else torch.tensor(
        rhs, device=global_lb.device)
    domains = BatchedDomainList(
        ret, lA, global_lb, global_ub, alpha,
        copy.deepcopy(ret['history']) if 'history' in ret else None,
        rhs=thresholds, net=net, x=x)

    # after domains are added, we replace global_lb, global_ub with the
    # multile targets 'real' global lb and ub to make them scalars
    global_lb, global_ub = global_lb.max(), global_ub.min()
    print(f'Initial global lower bound: {global_lb}')

    num_iter = 1
    total_round = 0
    result = 'unknown'
    while len(domains) > 0:
        total_round += 1
        print(f'BaB round {total_round}')
        iter_start = time.time()

        (global_lb, batch_size_used), batch = bab_step_with_retry(
            net, domains, domains, batch, stats,
            fix_interm_bounds=True)
        if isinstance(global_lb, torch.Tensor) and global_lb.numel() > 0:
            global_lb = global_lb.max()

        if auto_batch and stats.oom_count == 0:
            # Grow the batch while the GPU still has room for it.
            free, total = torch.cuda.mem_get_info()
            if free > 0.4 * total:
                batch = int(batch * 1.5)
                print(f'Enlarging batch size to {batch} '
                      f'({free / 2 ** 30:.1f} GB of {total / 2 ** 30:.1f} GB free)')

        if len(domains) > max_domains:
            print('Maximum number of visited domains has reached.')
            result = 'unknown'
            break

        if len(domains) == 0:
            print('All domains are verified.')
            result = 'safe'
            break

        if time.time() - start_time > timeout:
            print('Time out!!!!!!!!')
            result = 'unknown'
            break

        if max_iterations != -1 and num_iter >= max_iterations:
            print('Maximum number of iterations reached.')
            result = 'unknown'
            break
        num_iter += 1

        print(f'Current (lb-rhs): {global_lb}')
        print(f'{len(domains)} domains visited, '
              f'{time.time() - iter_start:.4f}s this round, '
              f'{time.time() - start_time:.4f}s in total')
        print('Cumulative time:', stats.timer)

    del domains
    torch.cuda.empty_cache()
    print(f'Finished BaB with {stats.visited} visited domains; '
          f'{stats.oom_count} out-of-memory retries.')
    return global_lb, global_ub, stats.visited, result
