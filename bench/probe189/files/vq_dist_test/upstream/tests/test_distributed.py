"""
multi-gpu sanity check for codebook syncing (kmeans init + ema updates) under ddp

    python tests/test_distributed.py            # uses every visible gpu
    CUDA_VISIBLE_DEVICES=0,1 python tests/test_distributed.py
"""

import os
import argparse

import torch
import torch.multiprocessing as mp
import torch.distributed as dist

from vector_quantize_pytorch import VectorQuantize, ResidualVQ

CODEBOOK_SIZE = 512
DIM = 256

def setup(rank, world_size, port):
    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ['MASTER_PORT'] = str(port)
    os.environ['NCCL_ASYNC_ERROR_HANDLING'] = '1'

    dist.init_process_group('nccl', rank = rank, world_size = world_size)
    torch.cuda.set_device(rank)

def cleanup():
    dist.barrier()
    dist.destroy_process_group()

def assert_same_across_ranks(t, world_size, name):
    gathered = [torch.zeros_like(t) for _ in range(world_size)]
    dist.all_gather(gathered, t.contiguous())

    for rank_ind, other in enumerate(gathered[1:], start = 1):
        max_diff = (gathered[0] - other).abs().max().item()
        assert max_diff < 1e-5, f'{name} differs between rank 0 and rank {rank_ind} (max abs diff {max_diff})'

def run_vq(rank, world_size, steps):
    torch.manual_seed(rank) # different data on every rank

    vq = VectorQuantize(
        dim = DIM,
        codebook_size = CODEBOOK_SIZE,
        kmeans_init = True,
        kmeans_iters = 10,
        sync_codebook = True,
        decay = 0.8
    ).cuda(rank)

    vq.train()

    for _ in range(steps):
        x = torch.randn(4, 1024, DIM, device = f'cuda:{rank}')
        quantized, indices, loss = vq(x)

        # codebook usage, summed over all ranks

        usage = torch.bincount(indices.flatten(), minlength = CODEBOOK_SIZE)
        dist.all_reduce(usage)

    assert_same_across_ranks(vq.codebook, world_size, 'vq codebook')

    if rank == 0:
        dead_codes = (usage == 0).sum().item()
        print(f'[vq] codebooks in sync across {world_size} ranks, {dead_codes} / {CODEBOOK_SIZE} codes unused')

def run_rvq(rank, world_size, steps):
    torch.manual_seed(rank)

    rvq = ResidualVQ(
        dim = DIM,
        num_quantizers = 4,
        codebook_size = CODEBOOK_SIZE,
        kmeans_init = True,
        sync_codebook = True,
        quantize_dropout = True
    ).to(torch.device('cuda', rank))

    rvq.train()

    for _ in range(steps):
        x = torch.randn(2, 512, DIM).to(rank)
        quantized, indices, commit_loss = rvq(x)

    for layer_ind, layer in enumerate(rvq.layers):
        assert_same_across_ranks(layer.codebook, world_size, f'rvq layer {layer_ind} codebook')

    if rank == 0:
        print(f'[rvq] all {len(rvq.layers)} residual codebooks in sync')

def worker(rank, world_size, port, steps):
    setup(rank, world_size, port)

    try:
        run_vq(rank, world_size, steps)
        run_rvq(rank, world_size, steps)
    finally:
        cleanup()

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type = int, default = 5)
    parser.add_argument('--port', type = int, default = 12355)
    args = parser.parse_args()

    world_size = torch.cuda.device_count()
    assert world_size >= 2, f'this test needs at least 2 gpus, found {world_size}'

    mp.spawn(worker, args = (world_size, args.port, args.steps), nprocs = world_size, join = True)
