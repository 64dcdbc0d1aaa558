import argparse

__all__ = ['args_init', 'args_to_str']


def args_init(n_nodes, knn_k, outer_opt, outer_opt_kwargs=None, net_units=32, net_act='silu',
              emb_depth=12, emb_agg='mean', par_depth=3, par_agg='mean', tr_batch_size=3, tr_outer_steps=1000,
              tr_inner_opt='AdamW', tr_inner_lr=5e-2, tr_inner_wd=0., tr_inner_steps=10, tr_inner_sample_size=1000,
              te_net_load=None, te_batch_size=1, te_inner_opt=None, te_inner_lr=None, te_inner_steps=None,
              device=None, **kwargs):
    """Populate the argument namespace used by the training and test scripts.

    Values passed as keyword arguments override the command line.
    """
    parser = argparse.ArgumentParser(description='DIMES for TSP')

    # problem
    parser.add_argument('--n_nodes', type=int, default=n_nodes, help='number of cities')
    parser.add_argument('--knn_k', type=int, default=knn_k, help='k of the k-nearest-neighbour graph')
    parser.add_argument('--seed', type=int, default=1, help='random seed')

    # network
    parser.add_argument('--net_units', type=int, default=net_units)
    parser.add_argument('--net_act', type=str, default=net_act, choices=['relu', 'silu', 'gelu'])
    parser.add_argument('--emb_depth', type=int, default=emb_depth, help='depth of the embedding GNN')
    parser.add_argument('--emb_agg', type=str, default=emb_agg, choices=['sum', 'mean', 'max'],
                        help='neighbourhood aggregation of the embedding GNN')
    parser.add_argument('--par_depth', type=int, default=par_depth, help='depth of the heatmap MLP')
    parser.add_argument('--par_agg', type=str, default=par_agg, choices=['sum', 'mean', 'max'])

    # outer (meta) optimisation
    parser.add_argument('--outer_opt', type=str, default=outer_opt)
    parser.add_argument('--outer_lr', type=float, default=(outer_opt_kwargs or {}).get('lr', 1e-3))
    parser.add_argument('--outer_wd', type=float, default=(outer_opt_kwargs or {}).get('weight_decay', 5e-4))
    parser.add_argument('--tr_batch_size', type=int, default=tr_batch_size)
    parser.add_argument('--tr_outer_steps', type=int, default=tr_outer_steps)

    # inner (per-instance) optimisation
    parser.add_argument('--tr_inner_opt', type=str, default=tr_inner_opt)
    parser.add_argument('--tr_inner_lr', type=float, default=tr_inner_lr)
    parser.add_argument('--tr_inner_wd', type=float, default=tr_inner_wd)
    parser.add_argument('--tr_inner_steps', type=int, default=tr_inner_steps)
    parser.add_argument('--tr_inner_sample_size', type=int, default=tr_inner_sample_size)

    # test time
    parser.add_argument('--te_net_load', type=str, default=te_net_load)
    parser.add_argument('--te_batch_size', type=int, default=te_batch_size)
    parser.add_argument('--te_inner_opt', type=str, default=te_inner_opt)
    parser.add_argument('--te_inner_lr', type=float, default=te_inner_lr)
    parser.add_argument('--te_inner_steps', type=int, default=te_inner_steps)
    parser.add_argument('--te_range', type=str, default=None, help='e.g. 0:128 to evaluate a slice of the test set')
    parser.add_argument('--te_sample_size', type=int, default=100)
    parser.add_argument('--te_mcts', action='store_true', help='refine the heatmap with MCTS (C++ solver, CPU)')

    # logistics
    parser.add_argument('--device', type=str, default='cuda:0' if device is None else device,
                        help='torch device, e.g. cuda:0 or cpu')
    parser.add_argument('--save_name', type=str, default=None)
    parser.add_argument('--output_dir', type=str, default='output')
    parser.add_argument('--data_dir', type=str, default='data')
    parser.add_argument('--log_every', type=int, default=10)
    parser.add_argument('--ckpt_every', type=int, default=100)

    args = parser.parse_args()
    for key, value in kwargs.items():
        setattr(args, key, value)
    if args.te_inner_opt is None:
        args.te_inner_opt = args.tr_inner_opt
    if args.te_inner_lr is None:
        args.te_inner_lr = args.tr_inner_lr
    if args.te_inner_steps is None:
        args.te_inner_steps = args.tr_inner_steps
    if args.save_name is None:
        args.save_name = f'tsp{args.n_nodes}~net{args.net_units}x{args.emb_depth}'
    return args


def args_to_str(args):
    keys = sorted(vars(args).keys())
    return '\n'.join(f'  {k:>22s} = {getattr(args, k)}' for k in keys)
