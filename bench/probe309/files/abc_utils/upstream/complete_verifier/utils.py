#########################################################################
##   This file is part of the alpha-beta-CROWN verifier              ##
##                                                                     ##
##   Copyright (C) 2021-2024 The alpha-beta-CROWN Team                 ##
##                                                                     ##
##     This program is licensed under the BSD 3-Clause License,        ##
##        contained in the LICENCE file in this directory.             ##
#########################################################################
import os
import sys
import time
import pickle
import socket
import warnings
import platform
from collections import defaultdict, OrderedDict

import numpy as np
import torch

import arguments


def expand_path(path):
    return os.path.expanduser(os.path.expandvars(path))


class Timer:
    """Accumulate the wall time of named phases of branch and bound."""
    def __init__(self):
        self.time = defaultdict(float)
        self.start_time = {}

    def start(self, name):
        self.start_time[name] = time.time()

    def add(self, name):
        self.time[name] += time.time() - self.start_time[name]

    def __repr__(self):
        return ', '.join(f'{k}: {v:.4f}' for k, v in self.time.items())


class Logger:
    def __init__(self, results_file):
        self.results_file = results_file
        self.verification_summary = defaultdict(list)
        self.time_all_instances = []
        self.status_per_sample_list = []
        self.timeout_threshold = None
        self.start_time = None
        self.env_info = get_env_info()

    def update_timeout(self, timeout):
        self.timeout_threshold = timeout

    def record_start_time(self):
        self.start_time = time.time()

    def summarize_results(self, verified_status, index):
        if verified_status.startswith('unsafe'):
            status = 'unsafe'
        elif verified_status.startswith('safe'):
            status = 'safe'
        else:
            status = verified_status
        self.verification_summary[status].append(index)
        elapsed = time.time() - self.start_time
        self.status_per_sample_list.append([verified_status, elapsed])
        self.time_all_instances.append(elapsed)
        print(f'Result: {verified_status} in {elapsed:.4f} seconds')

    def finish(self):
        if self.results_file:
            with open(self.results_file, 'wb') as file:
                pickle.dump({
                    'summary': dict(self.verification_summary),
                    'results': self.status_per_sample_list,
                    'env': self.env_info,
                }, file)
        print('############# Summary #############')
        total = len(self.time_all_instances)
        if total:
            print(f'Final verified acc: {len(self.verification_summary["safe"]) / total * 100.:.1f}% '
                  f'(total {total} examples)')
            print(f'Problem instances count: {total} , total verified (safe/unsat): '
                  f'{len(self.verification_summary["safe"])} , total falsified (unsafe/sat): '
                  f'{len(self.verification_summary["unsafe"])} , timeout: '
                  f'{len(self.verification_summary["unknown"])}')
            print(f'mean time for ALL instances (total {total}): '
                  f'{sum(self.time_all_instances) / total}, max time: {max(self.time_all_instances)}')
        for k, v in self.verification_summary.items():
            print(f'{k} ({len(v)}): {v}')


def get_env_info():
    """Collect the software / hardware environment for the results file, so
    that timing results of different runs can be compared."""
    info = OrderedDict()
    info['host'] = socket.gethostname()
    info['python'] = platform.python_version()
    info['torch'] = torch.__version__
    info['cuda'] = torch.version.cuda
    info['cudnn'] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    if torch.cuda.is_available():
        info['gpu'] = torch.cuda.get_device_name(0)
        info['gpu_count'] = torch.cuda.device_count()
        props = torch.cuda.get_device_properties(0)
        info['gpu_memory_gb'] = round(props.total_memory / 2 ** 30, 1)
        info['gpu_sm_count'] = props.multi_processor_count
    else:
        info['gpu'] = None
    return info


def check_tf32():
    """TF32 silently reduces the precision of fp32 matmuls and convolutions on
    Ampere and newer GPUs, which can make verified bounds unsound."""
    if not torch.cuda.is_available():
        return
    major, minor = torch.cuda.get_device_capability()
    if major >= 8 and (torch.backends.cuda.matmul.allow_tf32
                       or torch.backends.cudnn.allow_tf32):
        warnings.warn('TF32 is enabled on an Ampere (or newer) GPU; bounds may be '
                      'unsound. Set torch.backends.cuda.matmul.allow_tf32 = False.')


def check_memory_usage(device, threshold=0.9):
    """Return the fraction of device memory in use and warn when it is above
    `threshold`; used by the auto batch size logic."""
    if torch.device(device).type != 'cuda':
        return 0.0
    free, total = torch.cuda.mem_get_info(device)
    used = 1.0 - free / total
    if used > threshold:
        print(f'Warning: {used * 100:.1f}% of GPU memory in use '
              f'({(total - free) / 2 ** 30:.2f} GB / {total / 2 ** 30:.2f} GB).')
    return used


def fast_hist_copy(hists):
    """Copy the history list of a domain (per-layer split decisions)."""
    if hists is None:
        return None
    ret = {}
    for k, hist in hists.items():
        ret[k] = (hist[0].clone(), hist[1].clone(), hist[2].clone()) if len(hist) == 3 \
            else tuple(h.clone() for h in hist)
    return ret


def print_model(model):
    print(model)
    n_params = sum(p.numel() for p in model.parameters())
    print(f'Number of parameters: {n_params}')


def print_splitting_decisions(net, d, split_depth, split, branching_decision, rhs):
    print('splitting decisions: ')
    for l in range(split_depth):
        print(f'split level {l}', end=': ')
        for b in range(min(10, len(d['lower_bounds'][net.final_name]))):
            decision = branching_decision[l * len(d['lower_bounds'][net.final_name]) + b]
            print(f'[{net.split_nodes[decision[0]].name}, {decision[1]}]', end=' ')
        print('')


def print_average_branching_neurons(branching_decision, impl_stats, impl_params=None):
    """Print and store the average branched neurons at each iteration."""
    total_branching = len(branching_decision)
    impl_stats['total_branches'] = impl_stats.get('total_branches', 0) + total_branching
    impl_stats['bab_iterations'] = impl_stats.get('bab_iterations', 0) + 1
    print(f'Average branched neurons at iteration {impl_stats["bab_iterations"]}: '
          f'{impl_stats["total_branches"] / impl_stats["bab_iterations"]:.4f}')
