#########################################################################
##   This file is part of the alpha-beta-CROWN verifier              ##
##                                                                     ##
##   Copyright (C) 2021-2024 The alpha-beta-CROWN Team                 ##
##                                                                     ##
##     This program is licensed under the BSD 3-Clause License,        ##
##        contained in the LICENCE file in this directory.             ##
#########################################################################
"""Global configuration handler for the verifier.

Every option can be given either in a YAML config file (``--config``) or on
the command line; command line options override the YAML file, which in turn
overrides the defaults declared here.
"""
import os
import re
import sys
import copy
import argparse
from collections import defaultdict

import yaml
import torch


class ConfigHandler:

    def __init__(self):
        self.config_file_hierarchies = {
            # Given a hierarchy for each commandline option. This hierarchy is
            # used in yaml config. For example: "batch_size": ["solver",
            # "propagation", "batch_size"] will be an element in this
            # dictionary. The entries will be created in add_argument()
            # method.
        }
        # Stores all arguments according to their hierarchy.
        self.all_args = {}
        # Parses all arguments with their defaults.
        self.defaults_parser = argparse.ArgumentParser()
        # Parses the specified arguments only. Not specified arguments will be
        # ignored.
        self.no_defaults_parser = argparse.ArgumentParser(argument_default=argparse.SUPPRESS)
        # Help message for each configuration entry.
        self.help_messages = defaultdict(str)
        # Add all common arguments.
        self.add_common_options()

    def add_common_options(self):
        """
        Add all parameters that are shared by different front-ends.
        """

        # We must set how each parameter will be presented in the config file,
        # via the "hierarchy" parameter. Different levels are separated by "/".
        h = ["general"]
        self.add_argument('--config', type=str,
                          help='Path to YAML format config file.',
                          hierarchy=None)
        self.add_argument('--device', type=str, default='cuda',
                          choices=['cpu', 'cuda'],
                          help='Select device to run verifier, cpu or cuda (GPU).',
                          hierarchy=h + ["device"])
        self.add_argument('--seed', type=int, default=100,
                          help='Random seed.', hierarchy=h + ["seed"])
        self.add_argument('--conv_mode', default='patches',
                          choices=['patches', 'matrix'],
                          help='Convolution mode during bound propagation: '
                               '"patches" mode (default) is very efficient, '
                               'but may not support all architecture; '
                               '"matrix" mode is slow but supports all '
                               'architectures.',
                          hierarchy=h + ["conv_mode"])
        self.add_argument('--deterministic', action='store_true',
                          help='Run code in CUDA deterministic mode, which has '
                               'slower performance but better reproducibility.',
                          hierarchy=h + ["deterministic"])
        self.add_argument('--double_fp', action='store_true',
                          help='Use double precision floating point. GPUs with '
                               'good double precision support are preferable '
                               '(NVIDIA P100, V100, A100, H100; AMD Radeon '
                               'Instinc MI50, MI100).',
                          hierarchy=h + ["double_fp"])
        self.add_argument('--loss_reduction_func', default='sum',
                          help='When batch size is not 1, this reduction '
                               'function is applied to reduce the bounds into '
                               'a scalar (options are "sum" and "min").',
                          hierarchy=h + ["loss_reduction_func"])
        self.add_argument('--sparse_alpha', action='store_true',
                          help='Sparse alpha.', hierarchy=h + ["sparse_alpha"])
        self.add_argument('--no_sparse_interm', action='store_false',
                          dest='sparse_interm',
                          help='Sparse intermediate bounds.',
                          hierarchy=h + ["sparse_interm"])
        self.add_argument('--save_adv_example', action='store_true',
                          help='Save returned adversarial example in file.',
                          hierarchy=h + ["save_adv_example"])
        self.add_argument('--precompile_jit', action='store_true',
                          help='Precompile jit kernels to speed up after jit-wrapped '
                               'functions, but will cost extra time at the '
                               'beginning.',
                          hierarchy=h + ["precompile_jit"])
        self.add_argument('--prepare_only', action='store_true',
                          help='Prepare the model and vnnlib only without '
                               'running the verifier.',
                          hierarchy=h + ["prepare_only"])
        self.add_argument('--complete_verifier',
                          choices=['bab', 'mip', 'bab-refine', 'skip',
                                   'Customized'],
                          default='bab',
                          help='Complete verification verifier. "bab": branch '
                               'and bound with beta-CROWN or GCP-CROWN; '
                               '"mip": mixed integer programming (MIP) '
                               'formulation; "bab-refine": branch and bound '
                               'with intermediate layer bounds computed by '
                               'MIP; "skip": skip complete verification.',
                          hierarchy=h + ["complete_verifier"])
        self.add_argument('--no_incomplete', action='store_false',
                          dest='incomplete',
                          help='Enable/Disable initial alpha-CROWN incomplete '
                               'verification (disable this can save GPU '
                               'memory).',
                          hierarchy=h + ["enable_incomplete_verification"])
        self.add_argument('--results_file', type=str, default='out.txt',
                          help='Path to results file.',
                          hierarchy=h + ["results_file"])
        self.add_argument('--save_output', action='store_true',
                          help='Save output for test.',
                          hierarchy=h + ["save_output"])

        h = ["model"]
        self.add_argument('--model', type=str, default=None,
                          help='Model name. Will be evaluated as a python '
                               'statement.',
                          hierarchy=h + ["name"])
        self.add_argument('--load_model', type=str, default=None,
                          help='Load pretrained model from this specified '
                               'path.',
                          hierarchy=h + ["path"])
        self.add_argument('--onnx_path', type=str, default=None,
                          help='Path to .onnx model file.',
                          hierarchy=h + ["onnx_path"])
        self.add_argument('--input_shape', type=int, default=None, nargs='+',
                          help='Specified input shape of the model. '
                               'Usually we get input shape from vnnlib or the '
                               'dataset.',
                          hierarchy=h + ["input_shape"])

        h = ["data"]
        self.add_argument('--start', type=int, default=0,
                          help='Start from the i-th property in specified '
                               'dataset.',
                          hierarchy=h + ["start"])
        self.add_argument('--end', type=int, default=10000,
                          help='End with the (i-1)-th property in the dataset.',
                          hierarchy=h + ["end"])
        self.add_argument('--select_instance', type=int, nargs='+',
                          default=None,
                          help='Select a list of instances to verify.',
                          hierarchy=h + ["select_instance"])
        self.add_argument('--num_outputs', type=int, default=10,
                          help='Number of classes for classification problem.',
                          hierarchy=h + ["num_outputs"])
        self.add_argument('--mean', nargs='+', type=float, default=0.0,
                          help='Mean vector used in data preprocessing.',
                          hierarchy=h + ["mean"])
        self.add_argument('--std', nargs='+', type=float, default=1.0,
                          help='Std vector used in data preprocessing.',
                          hierarchy=h + ["std"])
        self.add_argument('--dataset', type=str, default=None,
                          help='Dataset name (only if not using specifications '
                               'from a .csv file).',
                          hierarchy=h + ["dataset"])

        h = ["specification"]
        self.add_argument('--spec_type', type=str, default='lp',
                          choices=['lp', 'box'],
                          help='Type of verification specification.',
                          hierarchy=h + ["type"])
        self.add_argument('--norm', type=float, default='inf',
                          help='Lp-norm for epsilon perturbation in robustness '
                               'verification (1, 2, inf).',
                          hierarchy=h + ["norm"])
        self.add_argument('--epsilon', type=float, default=None,
                          help='Set perturbation size (Lp norm). If not set, a '
                               'default value may be used based on dataset '
                               'loader.',
                          hierarchy=h + ["epsilon"])
        self.add_argument('--vnnlib_path', type=str, default=None,
                          help='Path to .vnnlib specification file. Will '
                               'override any Lp/robustness verification '
                               'arguments.',
                          hierarchy=h + ["vnnlib_path"])

        h = ["solver"]
        self.add_argument('--batch_size', type=int, default=64,
                          help='Batch size in bound solver (number of parallel '
                               'splits). Lower it when you run out of GPU '
                               'memory.',
                          hierarchy=h + ["batch_size"])
        self.add_argument('--auto_enlarge_batch_size', action='store_true',
                          help='Automatically enlarge the batch size while GPU '
                               'memory allows, and shrink it again when an '
                               'out-of-memory error is caught.',
                          hierarchy=h + ["auto_enlarge_batch_size"])
        self.add_argument('--min_batch_size_ratio', type=float, default=0.1,
                          help='The minimum batch size ratio in each '
                               'iteration (splitting multiple layers if the '
                               'number of domains is smaller than '
                               'min_batch_size_ratio * batch_size).',
                          hierarchy=h + ["min_batch_size_ratio"])
        self.add_argument('--lr_alpha', type=float, default=0.1,
                          help='Learning rate for the optimizable parameter '
                               'alpha in alpha-CROWN.',
                          hierarchy=h + ["alpha-crown", "lr_alpha"])
        self.add_argument('--init_iteration', type=int, default=100,
                          help='Number of iterations for alpha-CROWN '
                               'incomplete verifier.',
                          hierarchy=h + ["alpha-crown", "iteration"])
        self.add_argument('--share_alphas', action='store_true',
                          help='Share some alpha variables to save memory at '
                               'the cost of slightly looser bounds.',
                          hierarchy=h + ["alpha-crown", "share_alphas"])
        self.add_argument('--lr_beta', type=float, default=0.05,
                          help='Learning rate for optimizing beta during '
                               'branch and bound.',
                          hierarchy=h + ["beta-crown", "lr_beta"])
        self.add_argument('--iteration', type=int, default=50,
                          help='Number of iteration for optimizing beta.',
                          hierarchy=h + ["beta-crown", "iteration"])
        self.add_argument('--mip_multi_proc', type=int, default=None,
                          help='Number of multi-processes for mip solver. '
                               'Each process computes a mip bound for an '
                               'intermediate neuron. Default (None) is to '
                               'auto detect the number of CPU cores (note that '
                               'each process may use multiple threads, see the '
                               'next option).',
                          hierarchy=h + ["mip", "parallel_solvers"])

        h = ["bab"]
        self.add_argument('--initial_max_domains', type=int, default=1,
                          help='Number of domains we can add to domain list '
                               'at the same time before bab. For multi-class '
                               'problems this can be as large as the number of '
                               'labels.',
                          hierarchy=h + ["initial_max_domains"])
        self.add_argument('--max_domains', type=int, default=float('inf'),
                          help='Max number of subproblems in branch and bound.',
                          hierarchy=h + ["max_domains"])
        self.add_argument('--timeout', type=float, default=360,
                          help='Timeout (in second) for verifying one image/'
                               'property.',
                          hierarchy=h + ["timeout"])
        self.add_argument('--timeout_scale', type=float, default=1,
                          help='Scale the timeout for development purpose.',
                          hierarchy=h + ["timeout_scale"])
        self.add_argument('--no_sort_targets', action='store_false',
                          dest='sort_targets',
                          help='Sort targets before BaB.',
                          hierarchy=h + ["sort_targets"])

        h = ["attack"]
        self.add_argument('--pgd_order', type=str, default='before',
                          choices=['before', 'after', 'middle', 'skip'],
                          help='Run PGD before/after incomplete verification, '
                               'or skip it.',
                          hierarchy=h + ["pgd_order"])
        self.add_argument('--pgd_steps', type=int, default=100,
                          help='Steps of PGD attack.',
                          hierarchy=h + ["pgd_steps"])
        self.add_argument('--pgd_restarts', type=int, default=30,
                          help='Number of random PGD restarts.',
                          hierarchy=h + ["pgd_restarts"])

    def add_argument(self, *args, **kwargs):
        """Add a single parameter to the parser. We will check the 'hierarchy'
        specified and then pass the remaining arguments to argparse."""
        if 'hierarchy' not in kwargs:
            raise ValueError('please specify the "hierarchy" parameter when '
                             'adding this argument.')
        hierarchy = kwargs.pop('hierarchy')
        help = kwargs.get('help', '')
        private_option = args[0].startswith('--__')
        # Make sure valid help is given
        if not private_option:
            if len(help.strip()) < 10:
                raise ValueError(
                    f'Help message must not be empty, and must be detailed '
                    f'enough. "{help}" is not good enough.')
            elif (not help[0].isupper()) or help[-1] != '.':
                raise ValueError(
                    f'Help message must start with an upper case letter and '
                    f'end with a dot (.); your message "{help}" is invalid.')
        self.defaults_parser.add_argument(*args, **kwargs)
        # Build another parser without any defaults.
        if 'default' in kwargs:
            kwargs.pop('default')
        self.no_defaults_parser.add_argument(*args, **kwargs)
        # Determine the variable that will be used to save the argument by
        # argparse.
        if 'dest' in kwargs:
            dest = kwargs['dest']
        else:
            dest = re.sub('^-*', '', args[-1]).replace('-', '_')
        # Also register parameter hierarchy.
        if hierarchy is not None:
            # Build the hierarchy for help message
            current_help = self.help_messages
            for h in hierarchy[:-1]:
                current_help = current_help.setdefault(h, {})
            current_help[hierarchy[-1]] = help
            self.config_file_hierarchies[dest] = hierarchy

    def set_dict_by_hierarchy(self, args_dict, h, value, nonexist_ok=True):
        """Insert an argument into the dictionary of all parameters. The
        level in this dictionary is determined by list 'h'."""
        # Create all the levels if they do not exist.
        current_level = self.all_args
        assert len(h) != 0
        for config_name in h:
            if config_name not in current_level:
                if nonexist_ok:
                    current_level[config_name] = {}
                else:
                    raise ValueError(f'Config key {h} not found!')
            last_level = current_level
            current_level = current_level[config_name]
        # Add config value to leaf node.
        last_level[config_name] = value

    def construct_config_dict(self, args_dict, nonexist_ok=True):
        """Based on all arguments from argparse, construct the dictionary of
        all parameters in self.all_args."""
        for arg_name, arg_val in args_dict.items():
            h = self.config_file_hierarchies[arg_name]  # Get levels for this argument.
            self.set_dict_by_hierarchy(self.all_args, h, arg_val, nonexist_ok=nonexist_ok)

    def update_config_dict(self, old_args_dict, new_args_dict, levels=None):
        """Recursively update the dictionary of all parameters based on the
        dict read from config file."""
        if levels is None:
            levels = []
        if isinstance(new_args_dict, dict):
            # Go to the next dict level.
            for k in new_args_dict:
                self.update_config_dict(old_args_dict, new_args_dict[k], levels=levels + [k])
        else:
            # Reached the leaf level. Set the corresponding key.
            self.set_dict_by_hierarchy(old_args_dict, levels, new_args_dict, nonexist_ok=False)

    def parse_config(self, args=None):
        """
        Main function to parse parameter configurations. The commandline
        arguments have the highest priority; then the parameters specified in
        yaml config file. If a parameter does not exist in either commandline
        or the yaml config file, we use the defaults defined in
        add_common_options() defined above.
        """
        # Parse an empty commandline to get all default arguments.
        default_args = vars(self.defaults_parser.parse_args([]))
        # Create the dictionary of all parameters, all set to their default values.
        self.construct_config_dict(default_args)
        # Update documents.
        # self.generate_docs()
        # These are arguments specified in command line.
        specified_args = vars(self.no_defaults_parser.parse_args(args))
        # Read the yaml config files.
        if 'config' in specified_args:
            with open(specified_args['config'], 'r') as config_file:
                loaded_args = yaml.safe_load(config_file)
                # Update the defaults with the parameters in the config file.
                self.update_config_dict(self.all_args, loaded_args)
        # Finally, override the parameters based on commandline arguments.
        self.construct_config_dict(specified_args, nonexist_ok=False)
        # Fall back to CPU rather than crash on machines without a GPU.
        if self.all_args['general']['device'] == 'cuda' and not torch.cuda.is_available():
            print('WARNING: CUDA is not available, running the verifier on CPU.')
            self.all_args['general']['device'] = 'cpu'
        # For compatibility, we still return all the arguments from argparser.
        parsed_args = self.defaults_parser.parse_args(args)
        # Print all configuration.
        print('Configurations:\n')
        print(yaml.safe_dump(self.all_args, default_flow_style=False))
        return parsed_args

    def keys(self):
        return self.all_args.keys()

    def items(self):
        return self.all_args.items()

    def __getitem__(self, key):
        """Read an item from the dictionary of parameters."""
        return self.all_args[key]

    def __setitem__(self, key, value):
        """Set an item from the dictionary of parameters."""
        self.all_args[key] = value


class ReadOnlyDict(dict):
    def __readonly__(self, *args, **kwargs):
        raise RuntimeError("You must not modify this dict")
    __setitem__ = __readonly__
    __delitem__ = __readonly__
    pop = __readonly__
    popitem = __readonly__
    clear = __readonly__
    update = __readonly__
    setdefault = __readonly__
    del __readonly__


# Global configuration variable
Config = ConfigHandler()
# Global variables
Globals = {
    'starting_timestamp': 0,
    'out': {},
    'example_idx': -1,
}
