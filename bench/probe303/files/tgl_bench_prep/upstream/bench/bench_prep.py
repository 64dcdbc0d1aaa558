"""Micro-benchmark for the host->GPU part of a TGL iteration (prepare_input + prep_input_mails).

Compares three ways of getting the sampled feature rows onto the GPU:
  1. pageable: index on the host, then .cuda()
  2. pinned:   index into a pinned staging buffer, then .cuda(non_blocking=True)
  3. resident: features already on the GPU (train_param all_on_gpu), index on the device

Sampling is done once up front so only the data movement is timed.  Wrap the run in
`nsys profile -t cuda,nvtx` to see the ranges pushed below.

    python bench/bench_prep.py --data WIKI --config config/TGN.yml --iters 200
"""
import argparse
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from utils import load_feat, load_graph, parse_config, to_dgl_blocks, get_pinned_buffers, prepare_input  # noqa: E402
from sampler import ParallelSampler, NegLinkSampler  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument('--data', type=str, default='WIKI')
parser.add_argument('--config', type=str, default='config/TGN.yml')
parser.add_argument('--gpu', type=int, default=0)
parser.add_argument('--iters', type=int, default=200)
parser.add_argument('--warmup', type=int, default=10)
parser.add_argument('--batch_size', type=int, default=0, help='override train.batch_size from the config')
args = parser.parse_args()

assert torch.cuda.is_available(), 'this benchmark needs a GPU'
torch.cuda.set_device(args.gpu)
device = torch.device('cuda', args.gpu)


def timed(fn, name):
    """average milliseconds per call, measured with CUDA events around `args.iters` calls"""
    for _ in range(args.warmup):
        fn()
    torch.cuda.synchronize()  # drain the warmup iterations
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    torch.cuda.nvtx.range_push(name)
    for _ in range(args.iters):
        fn()
    torch.cuda.nvtx.range_pop()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / args.iters


def main():
    node_feats, edge_feats = load_feat(args.data)
    g, df = load_graph(args.data)
    sample_param, memory_param, gnn_param, train_param = parse_config(args.config)
    batch_size = args.batch_size or train_param['batch_size']

    sampler = ParallelSampler(g['indptr'], g['indices'], g['eid'], g['ts'].astype(np.float32),
                              sample_param['num_thread'], 1, sample_param['layer'], sample_param['neighbor'],
                              sample_param['strategy'] == 'recent', sample_param['prop_time'],
                              sample_param['history'], float(sample_param['duration']))
    neg_link_sampler = NegLinkSampler(g['indptr'].shape[0] - 1)

    rows = df[:batch_size]
    root_nodes = np.concatenate([rows.src.values, rows.dst.values, neg_link_sampler.sample(len(rows))]).astype(np.int32)
    ts = np.concatenate([rows.time.values, rows.time.values, rows.time.values]).astype(np.float32)
    sampler.sample(root_nodes, ts)
    ret = sampler.get_ret()
    print('sampled {} roots, sample time {:.2f}ms'.format(root_nodes.shape[0], ret[0].sample_time() * 1000))

    # -- 1. pageable host memory --------------------------------------------------------------
    def pageable():
        mfgs = to_dgl_blocks(ret, sample_param['history'])
        prepare_input(mfgs, node_feats, edge_feats)

    # -- 2. pinned staging buffers -------------------------------------------------------------
    nfeat_buffs, efeat_buffs = get_pinned_buffers(sample_param, batch_size, node_feats, edge_feats)

    def pinned():
        mfgs = to_dgl_blocks(ret, sample_param['history'])
        prepare_input(mfgs, node_feats, edge_feats, pinned=True, nfeat_buffs=nfeat_buffs, efeat_buffs=efeat_buffs)

    # -- 3. everything resident on the device ----------------------------------------------------
    node_feats_dev = node_feats.to(device) if node_feats is not None else None
    edge_feats_dev = edge_feats.to(device) if edge_feats is not None else None

    def resident():
        mfgs = to_dgl_blocks(ret, sample_param['history'])
        prepare_input(mfgs, node_feats_dev, edge_feats_dev)

    results = {}
    results['pageable'] = timed(pageable, 'prep/pageable')
    results['pinned'] = timed(pinned, 'prep/pinned')
    results['resident'] = timed(resident, 'prep/resident')

    # raw copy bandwidth for reference
    nbytes = 256 * 1024 * 1024
    host_pageable = torch.empty(nbytes // 4, dtype=torch.float32)
    host_pinned = torch.empty(nbytes // 4, dtype=torch.float32).pin_memory()
    dev_buf = torch.empty(nbytes // 4, dtype=torch.float32, device=device)
    bw_pageable = nbytes / (timed(lambda: dev_buf.copy_(host_pageable), 'h2d/pageable') / 1000) / 1e9
    bw_pinned = nbytes / (timed(lambda: dev_buf.copy_(host_pinned, non_blocking=True), 'h2d/pinned') / 1000) / 1e9

    print('device: {}'.format(torch.cuda.get_device_name(args.gpu)))
    for k, v in results.items():
        print('  {:<9s} {:8.3f} ms / iter'.format(k, v))
    print('  H2D pageable {:6.1f} GB/s, pinned {:6.1f} GB/s'.format(bw_pageable, bw_pinned))
    print('  peak device memory {:.2f} GB'.format(torch.cuda.max_memory_allocated(device) / 1024 ** 3))


if __name__ == '__main__':
    t0 = time.time()
    main()
    print('done in {:.1f}s'.format(time.time() - t0))
