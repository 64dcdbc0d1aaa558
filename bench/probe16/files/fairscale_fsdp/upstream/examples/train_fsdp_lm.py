# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the BSD license found in the
# LICENSE file in the root directory of this source tree.
"""Language-model benchmark for FullyShardedDataParallel (fairscale) on multiple GPUs."""

import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from fairscale.nn.checkpoint.checkpoint_activations import checkpoint_wrapper
from fairscale.nn.data_parallel import FullyShardedDataParallel as FSDP
from fairscale.nn.wrap import auto_wrap, enable_wrap
from fairscale.optim.grad_scaler import ShardedGradScaler
from fairscale.utils.testing import dist_init


class SyntheticLM(Dataset):
    def __init__(self, vocab, seq_len, n):
        self.vocab, self.seq_len, self.n = vocab, seq_len, n

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        g = torch.Generator().manual_seed(idx)
        return torch.randint(0, self.vocab, (self.seq_len + 1,), generator=g)


class TransformerLM(nn.Module):
    def __init__(self, vocab=32000, d_model=1024, nhead=16, nlayers=12, dropout=0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.zeros(1, 2048, d_model))
        layers = []
        for _ in range(nlayers):
            layer = nn.TransformerEncoderLayer(d_model, nhead, 4 * d_model, dropout, batch_first=True, norm_first=True)
            layers.append(checkpoint_wrapper(layer, offload_to_cpu=False))
        self.layers = nn.ModuleList(layers)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, x):
        h = self.embed(x) + self.pos[:, : x.size(1)]
        mask = torch.triu(torch.full((x.size(1), x.size(1)), float("-inf"), device=x.device), diagonal=1)
        for layer in self.layers:
            h = layer(h, src_mask=mask)
        return self.head(self.norm(h))


def get_args():
    parser = argparse.ArgumentParser(description="fairscale FSDP LM benchmark")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--seq-len", type=int, default=1024)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--amp", action="store_true", help="use torch.cuda.amp mixed precision")
    parser.add_argument("--flatten", action="store_true", default=True)
    parser.add_argument("--world-size", type=int, default=torch.cuda.device_count())
    return parser.parse_args()


def train(rank, args, tmp_file):
    dist_init(rank, args.world_size, tmp_file)
    torch.cuda.set_device(rank)
    torch.manual_seed(0)
    torch.cuda.manual_seed(0)

    fsdp_config = dict(
        mixed_precision=args.amp,
        flatten_parameters=args.flatten,
        fp32_reduce_scatter=args.amp,
        compute_device=torch.device("cuda", rank),
        move_grads_to_cpu=False,
        reshard_after_forward=True,
    )
    model = TransformerLM()
    with enable_wrap(wrapper_cls=FSDP, **fsdp_config):
        model = auto_wrap(model.cuda())
        model = FSDP(model, **fsdp_config)

    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scaler = ShardedGradScaler() if args.amp else None

    ds = SyntheticLM(32000, args.seq_len, 4096)
    sampler = DistributedSampler(ds, num_replicas=args.world_size, rank=rank)
    loader = DataLoader(ds, batch_size=args.batch_size, sampler=sampler, num_workers=2, pin_memory=True)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        torch.cuda.synchronize()
        start = time.time()
        total_tokens = 0
        for step, batch in enumerate(loader):
            batch = batch.cuda(non_blocking=True)
            inputs, targets = batch[:, :-1], batch[:, 1:]
            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=args.amp):
                logits = model(inputs)
                loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
            if scaler is not None:
                scaler.scale(loss).backward()
                model.clip_grad_norm_(1.0)
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()
                model.clip_grad_norm_(1.0)
                optimizer.step()
            total_tokens += inputs.numel() * args.world_size
            if rank == 0 and step % 20 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.3f} ppl {math.exp(min(loss.item(), 20)):.1f}")
        torch.cuda.synchronize(rank)
        elapsed = time.time() - start
        if rank == 0:
            peak = torch.cuda.max_memory_allocated(rank) / 2**30
            print(f"epoch {epoch}: {total_tokens / elapsed:.0f} tok/s, peak mem {peak:.2f} GiB")

    state = model.state_dict()
    if rank == 0:
        torch.save(state, os.path.join(os.getcwd(), "fsdp_lm.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    args = get_args()
    assert torch.cuda.is_available(), "This benchmark requires CUDA"
    tmp_file = os.path.join("/tmp", f"fsdp_rdzv_{os.getpid()}")
    mp.spawn(train, args=(args, tmp_file), nprocs=args.world_size, join=True)
