"""Distributed gradient-similarity data valuation.

Stage 1 (warmup): fine-tune the model on a random 5% of the training pool
with DDP + mixed precision and keep a few checkpoints.
Stage 2 (featurize): for every checkpoint, compute per-example gradients of
the training pool and of a small target (validation) set, project them to
`--proj-dim` dims with a shared random Rademacher matrix, and store them.
Stage 3 (score): value(z) = sum_ckpt lr_ckpt * <g_train(z), mean g_target>.

Launch with torchrun, see scripts/launch_valuation.sh.
"""
import argparse
import math
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Subset
from torch.utils.data.distributed import DistributedSampler

from valuation.data import build_pool, build_target
from valuation.models import build_model

# surface NCCL failures instead of hanging forever on a dead rank
os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--dataset", default="cifar10")
    p.add_argument("--arch", default="resnet18")
    p.add_argument("--warmup-frac", type=float, default=0.05)
    p.add_argument("--warmup-epochs", type=int, default=4)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--grad-batch-size", type=int, default=32)
    p.add_argument("--proj-dim", type=int, default=8192)
    p.add_argument("--fp16", action="store_true", help="use CUDA AMP for the warmup stage")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="outputs/grad_valuation")
    p.add_argument("--num-workers", type=int, default=8)
    return p.parse_args()


def setup_distributed():
    if "RANK" not in os.environ:
        # single process fallback (debugging)
        return 0, 1, 0
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return rank, world_size, local_rank


def seed_all(seed):
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def warmup(model, pool, args, rank, world_size, local_rank):
    n_warm = int(len(pool) * args.warmup_frac)
    g = torch.Generator().manual_seed(args.seed)
    warm_idx = torch.randperm(len(pool), generator=g)[:n_warm].tolist()
    warm_set = Subset(pool, warm_idx)
    sampler = DistributedSampler(warm_set, num_replicas=world_size, rank=rank, shuffle=True) if world_size > 1 else None
    loader = DataLoader(warm_set, batch_size=args.batch_size, sampler=sampler, shuffle=sampler is None,
                        num_workers=args.num_workers, pin_memory=True, pin_memory_device="cuda",
                        drop_last=True)
    ddp_model = DDP(model, device_ids=[local_rank], output_device=local_rank) if world_size > 1 else model
    optimizer = torch.optim.AdamW(ddp_model.parameters(), lr=args.lr, weight_decay=0.0)
    total_steps = args.warmup_epochs * len(loader)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: 0.5 * (1 + math.cos(math.pi * min(s, total_steps) / total_steps)))
    # bf16 on Ampere+ (no loss scaling needed), fp16 + GradScaler on V100
    use_bf16 = args.fp16 and torch.cuda.get_device_capability(local_rank)[0] >= 8
    amp_dtype = torch.bfloat16 if use_bf16 else torch.float16
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16 and not use_bf16)
    ckpts = []
    for epoch in range(args.warmup_epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        ddp_model.train()
        t0 = time.time()
        for x, y in loader:
            x = x.cuda(local_rank, non_blocking=True)
            y = y.cuda(local_rank, non_blocking=True)
            with torch.cuda.amp.autocast(enabled=args.fp16, dtype=amp_dtype):
                loss = F.cross_entropy(ddp_model(x), y)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
        if rank == 0:
            path = os.path.join(args.out, f"ckpt_ep{epoch}.pt")
            torch.save({"model": model.state_dict(), "lr": scheduler.get_last_lr()[0]}, path)
            ckpts.append(path)
            print(f"[warmup] epoch {epoch} loss {loss.item():.4f} ({time.time() - t0:.0f}s)", flush=True)
    if world_size > 1:
        dist.barrier()
    return [os.path.join(args.out, f"ckpt_ep{e}.pt") for e in range(args.warmup_epochs)]


def rademacher_projection(grad_dim, proj_dim, seed, device):
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    P = torch.randint(0, 2, (grad_dim, proj_dim), generator=gen, device=device, dtype=torch.int8)
    return (P.to(torch.float16) * 2 - 1) / math.sqrt(proj_dim)


def per_example_grads(model, x, y):
    """Loop over the batch; vmap-free so that BatchNorm in eval mode is fine."""
    params = [p for p in model.parameters() if p.requires_grad]
    out = []
    for i in range(x.shape[0]):
        loss = F.cross_entropy(model(x[i:i + 1]), y[i:i + 1])
        g = torch.autograd.grad(loss, params)
        out.append(torch.cat([t.reshape(-1) for t in g]))
    return torch.stack(out)


@torch.no_grad()
def project(G, P, chunk=4096):
    return torch.cat([(G[:, s:s + chunk].half() @ P[s:s + chunk]) for s in range(0, G.shape[1], chunk)], 1) \
        if G.shape[1] > chunk else G.half() @ P


def featurize(model, dataset, P, args, rank, world_size, local_rank):
    idx = list(range(rank, len(dataset), world_size))
    loader = DataLoader(Subset(dataset, idx), batch_size=args.grad_batch_size, shuffle=False,
                        num_workers=args.num_workers // 2)
    model.eval()
    feats = []
    for x, y in loader:
        x, y = x.to(f"cuda:{local_rank}"), y.to(f"cuda:{local_rank}")
        with torch.enable_grad():
            G = per_example_grads(model, x, y)
        feats.append(project(G.float(), P).float().cpu())
        del G
    local = torch.cat(feats) if feats else torch.zeros(0, P.shape[1])
    return gather_rows(local, idx, len(dataset), world_size)


def gather_rows(local, idx, n, world_size):
    if world_size == 1:
        return local
    if dist.get_backend() == "nccl":
        local = local.cuda()
    sizes = [None] * world_size
    dist.all_gather_object(sizes, (len(idx), local.shape[1]))
    max_rows = max(s[0] for s in sizes)
    padded = torch.zeros(max_rows, local.shape[1], device=local.device, dtype=local.dtype)
    padded[: local.shape[0]] = local
    buf = [torch.empty_like(padded) for _ in range(world_size)]
    dist.all_gather(buf, padded)
    full = torch.zeros(n, local.shape[1])
    for r, b in enumerate(buf):
        rows = list(range(r, n, world_size))
        full[rows] = b[: len(rows)].cpu()
    return full


def main():
    args = parse_args()
    rank, world_size, local_rank = setup_distributed()
    seed_all(args.seed + rank)
    os.makedirs(args.out, exist_ok=True)
    cpu_group = dist.new_group(backend="gloo") if world_size > 1 else None

    pool = build_pool(args.dataset)
    target = build_target(args.dataset)
    model = build_model(args.arch, num_classes=pool.num_classes)
    model.cuda(local_rank)
    if world_size > 1:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)

    ckpts = warmup(model, pool, args, rank, world_size, local_rank)

    grad_dim = sum(p.numel() for p in model.parameters() if p.requires_grad)
    P = rademacher_projection(grad_dim, args.proj_dim, args.seed, device=f"cuda:{local_rank}")
    scores = torch.zeros(len(pool))
    for ck in ckpts:
        state = torch.load(ck, map_location={"cuda:0": f"cuda:{local_rank}"})
        model.load_state_dict(state["model"])
        g_train = featurize(model, pool, P, args, rank, world_size, local_rank)
        g_target = featurize(model, target, P, args, rank, world_size, local_rank).mean(0)
        scores += state["lr"] * (F.normalize(g_train, dim=1) @ F.normalize(g_target, dim=0))
        if rank == 0:
            print(f"[score] {ck}: mem {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB", flush=True)
    if rank == 0:
        torch.save({"scores": scores, "args": vars(args)}, os.path.join(args.out, "scores.pt"))
        order = torch.argsort(scores)
        print("lowest-valued examples:", order[:20].tolist())
    if world_size > 1:
        dist.barrier(group=cpu_group)
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
