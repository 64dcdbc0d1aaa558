"""FIDDLE: Flexible Data-Driven Pipeline -- main entry point.

Transforms a long-format EHR table (ID, t, variable_name, variable_value) plus a population file
into sparse time-invariant (s) and time-dependent (X) feature tensors for downstream ML.

Everything here runs on CPU (pandas + sparse); n_jobs controls joblib parallelism. The
outputs are consumed by the GPU training scripts in mimic3_experiments/ via sparse.load_npz.
"""
import argparse
import json
import os
import pickle
import time

import numpy as np
import pandas as pd
import sparse
import yaml

from .config import load_config
from .steps import (pre_filter, parse_variable_data_type, split_by_timestamp_type,
                    process_time_invariant, process_time_dependent)


def str2bool(v):
    if isinstance(v, bool):
        return v
    if v.lower() in ('yes', 'true', 't', 'y', '1'):
        return True
    elif v.lower() in ('no', 'false', 'f', 'n', '0'):
        return False
    raise argparse.ArgumentTypeError('Boolean value expected.')


def main():
    parser = argparse.ArgumentParser(description='')

    # Files
    parser.add_argument('--data_fname', type=str, required=True)
    parser.add_argument('--population_fname', type=str, required=True)
    parser.add_argument('--output_dir', type=str, required=True)
    parser.add_argument('--config_fname', type=str, required=False)

    # Settings
    parser.add_argument('--T', type=float, required=True)
    parser.add_argument('--dt', type=float, required=True)
    parser.add_argument('--theta_1', type=float, default=0.001)
    parser.add_argument('--theta_2', type=float, default=0.001)
    parser.add_argument('--theta_freq', type=float, default=1.0)
    parser.add_argument('--stats_functions', nargs='+', default=['min', 'max', 'mean'])

    # Debug
    parser.add_argument('--N', type=int, required=False)
    parser.add_argument('--Ds', nargs='+', type=int)
    parser.add_argument('--no_prefilter', dest='prefilter', action='store_false')
    parser.add_argument('--no_postfilter', dest='postfilter', action='store_false')
    parser.set_defaults(prefilter=True, postfilter=True)
    parser.add_argument('--n_jobs', type=int, default=72, help='joblib workers (CPU only; no GPU needed)')
    parser.add_argument('--batch_size', type=int, default=100)
    parser.add_argument('--use_cuda_sparse', type=str2bool, default=False,
                        help='deprecated; kept for CLI compatibility, ignored (pydata/sparse is CPU-only)')

    args = parser.parse_args()

    data_fname = args.data_fname
    if data_fname.endswith('.p' or '.pickle'):
        df_data = pd.read_pickle(args.data_fname)
    elif data_fname.endswith('.csv'):
        df_data = pd.read_csv(args.data_fname)
    elif data_fname.endswith('.feather'):
        df_data = pd.read_feather(args.data_fname)
    else:
        raise NotImplementedError("unsupported input format: {}".format(data_fname))

    df_population = pd.read_csv(args.population_fname).set_index('ID')
    config = load_config(args.config_fname)

    args.df_population = df_population
    args.config = config
    args.data_path = args.output_dir
    os.makedirs(args.data_path, exist_ok=True)

    args.hierarchical_sep = config.get('hierarchical_sep', ':')
    args.hierarchical_levels = config.get('hierarchical_levels', [])
    args.value_type_override = config.get('value_type_override', {})
    args.discretize = config.get('discretize', True)
    args.use_ordinal_encoding = config.get('use_ordinal_encoding', False)

    print('Input:')
    print('    Data      :', args.data_fname)
    print('    Population:', args.population_fname)
    print('    Config    :', args.config_fname)
    print()
    print('Output directory:', args.data_path)
    print()
    print('Input arguments:')
    print('    {:<6} = {}'.format('T', args.T))
    print('    {:<6} = {}'.format('dt', args.dt))
    print('    {:<6} = {}'.format('\u03B8\u2081', args.theta_1))
    print('    {:<6} = {}'.format('\u03B8\u2082', args.theta_2))
    print('    {:<6} = {}'.format('\u03B8_freq', args.theta_freq))
    print('    {:<6} = {} {}'.format('k', len(args.stats_functions), args.stats_functions))
    print()
    print('{} = {}'.format('discretize', {False: 'no', True: 'yes'}[args.discretize]))
    if args.discretize:
        print('    S discretization bins:', 'to be computed from data')
        print('    X discretization bins:', 'to be computed from data')
    print()

    N = args.N
    if N is not None:
        df_population = df_population.iloc[:N]
        df_data = df_data[df_data['ID'].isin(df_population.index)]
        args.df_population = df_population

    start_time = time.time()

    ######
    print_header('1) Pre-filter')
    df_data = pre_filter(df_data, args.theta_1, df_population, args)
    print('Time elapsed: %f seconds' % (time.time() - start_time), flush=True)

    ######
    print_header('2) Transform; 3) Post-filter')
    df_data, df_types = parse_variable_data_type(df_data, args.value_type_override, args)
    df_time_invariant, df_time_series = split_by_timestamp_type(df_data)

    # Process time-invariant data
    s, s_feature_names, s_feature_aliases = process_time_invariant(df_time_invariant, args)

    # Process time-dependent data
    X, X_feature_names, X_feature_aliases = process_time_dependent(df_time_series, args)

    ######
    print_header('Output')
    sparse.save_npz(os.path.join(args.data_path, 's.npz'), s)
    sparse.save_npz(os.path.join(args.data_path, 'X.npz'), X)
    with open(os.path.join(args.data_path, 's.feature_names.json'), 'w') as f:
        json.dump(list(s_feature_names), f, sort_keys=True)
    with open(os.path.join(args.data_path, 'X.feature_names.json'), 'w') as f:
        json.dump(list(X_feature_names), f, sort_keys=True)
    with open(os.path.join(args.data_path, 's.feature_aliases.json'), 'w') as f:
        json.dump(s_feature_aliases, f, sort_keys=True)
    with open(os.path.join(args.data_path, 'X.feature_aliases.json'), 'w') as f:
        json.dump(X_feature_aliases, f, sort_keys=True)
    with open(os.path.join(args.data_path, 'args.yaml'), 'w') as f:
        yaml.safe_dump({k: v for k, v in vars(args).items()
                        if isinstance(v, (int, float, str, bool, list, type(None)))}, f)

    print('Output files written to:', args.data_path)
    print('    s.npz :', s.shape, '(density {:.4f})'.format(s.density))
    print('    X.npz :', X.shape, '(density {:.4f})'.format(X.density))
    print('Total time: %f seconds' % (time.time() - start_time))
    print('', flush=True)


def print_header(*content, char='='):
    print()
    print(char * 80)
    print(*content)
    print(char * 80, flush=True)


if __name__ == '__main__':
    main()
