"""Train a small Mamba / GLA hybrid language model with DDP.

    torchrun --nproc_per_node=8 examples/train_hybrid_lm.py --config configs/train_hybrid.yaml

Mixer layers come from mamba_ssm (selective scan + causal conv1d CUDA kernels) and
fla (Triton GLA kernels); attention layers go through open_lm.attention.get_attn_func.
The loss is Liger's fused cross entropy unless --no-liger is given.
"""
import argparse
import math
import os
import time
from contextlib import nullcontext

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from hybrid_lm.data import PackedTokenDataset
from hybrid_lm.model import HybridConfig, HybridLM

try:
    from liger_kernel.transformers import LigerCrossEntropyLoss
except ImportError:
    LigerCrossEntropyLoss = None


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, required=True)
    parser.add_argument("--out-dir", type=str, default="out/hybrid")
    parser.add_argument("--resume", type=str, default=None)
    parser.add_argument("--precision", choices=["bf16", "fp16", "fp32"], default="bf16")
    parser.add_argument("--optimizer", choices=["adamw", "fused_adam"], default="adamw")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model (max-autotune)")
    parser.add_argument("--no-liger", action="store_true")
    parser.add_argument("--seed", type=int, default=1337)
    parser.add_argument("--log-interval", type=int, default=10)
    return parser.parse_args()


def setup_distributed():
    if "RANK" not in os.environ:
        return 0, 0, 1
    # surface hangs instead of waiting forever on a dead rank
    os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = dist.get_world_size()
    torch.cuda.set_device(local_rank)
    return rank, local_rank, world_size


def get_lr(step, cfg):
    if step < cfg["warmup_steps"]:
        return cfg["lr"] * (step + 1) / cfg["warmup_steps"]
    if step > cfg["max_steps"]:
        return cfg["min_lr"]
    ratio = (step - cfg["warmup_steps"]) / max(1, cfg["max_steps"] - cfg["warmup_steps"])
    coeff = 0.5 * (1.0 + math.cos(math.pi * ratio))
    return cfg["min_lr"] + coeff * (cfg["lr"] - cfg["min_lr"])


def build_optimizer(model, cfg, kind):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if p.dim() < 2 or getattr(p, "_no_weight_decay", False) or name.endswith(".bias"):
            no_decay.append(p)
        else:
            decay.append(p)
    groups = [
        {"params": decay, "weight_decay": cfg["weight_decay"]},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    if kind == "fused_adam":
        from apex.optimizers import FusedAdam

        return FusedAdam(groups, lr=cfg["lr"], betas=tuple(cfg["betas"]), eps=1e-8)
    return torch.optim.AdamW(groups, lr=cfg["lr"], betas=tuple(cfg["betas"]), eps=1e-8, fused=True)


@torch.no_grad()
def evaluate(model, loader, loss_fn, ctx, device, max_batches=50):
    model.eval()
    total, count = 0.0, 0
    for i, (x, y) in enumerate(loader):
        if i >= max_batches:
            break
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        with ctx:
            logits = model(x)
            loss = loss_fn(logits.view(-1, logits.size(-1)), y.view(-1))
        total += loss.item()
        count += 1
    model.train()
    return total / max(count, 1)


def main():
    args = get_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    rank, local_rank, world_size = setup_distributed()
    is_master = rank == 0
    device = f"cuda:{local_rank}"
    torch.manual_seed(args.seed + rank)
    torch.cuda.manual_seed(args.seed + rank)

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    ptdtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[args.precision]
    if args.precision == "bf16" and not torch.cuda.is_bf16_supported():
        raise RuntimeError("bf16 requested but this GPU does not support it; use --precision fp16")
    ctx = nullcontext() if args.precision == "fp32" else torch.autocast(device_type="cuda", dtype=ptdtype)
    scaler = torch.cuda.amp.GradScaler(enabled=(args.precision == "fp16"))

    train_ds = PackedTokenDataset(cfg["data"]["train_path"], seq_len=cfg["data"]["seq_len"])
    val_ds = PackedTokenDataset(cfg["data"]["val_path"], seq_len=cfg["data"]["seq_len"])
    train_sampler = DistributedSampler(train_ds, shuffle=True) if world_size > 1 else None
    train_loader = DataLoader(
        train_ds,
        batch_size=cfg["train"]["micro_batch_size"],
        sampler=train_sampler,
        shuffle=train_sampler is None,
        num_workers=cfg["data"]["num_workers"],
        pin_memory=True,
        drop_last=True,
    )
    val_loader = DataLoader(val_ds, batch_size=cfg["train"]["micro_batch_size"], num_workers=2)

    model_cfg = HybridConfig(**cfg["model"])
    model = HybridLM(model_cfg).cuda()
    if is_master:
        n_params = sum(p.numel() for p in model.parameters())
        print(f"model: {n_params / 1e6:.1f}M params, mixers={model_cfg.layer_pattern}, attn={model_cfg.attn_name}")

    optimizer = build_optimizer(model, cfg["optim"], args.optimizer)

    start_step = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cuda")
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start_step = ckpt["step"] + 1

    if args.compile:
        # the Triton/CUDA mixers are opaque to dynamo; only the attention/MLP blocks get fused
        model = torch.compile(model, mode="max-autotune")
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], gradient_as_bucket_view=True)

    if LigerCrossEntropyLoss is not None and not args.no_liger:
        loss_fn = LigerCrossEntropyLoss(ignore_index=-100)
    else:
        loss_fn = nn.CrossEntropyLoss(ignore_index=-100)

    grad_accum = cfg["train"]["grad_accum"]
    max_steps = cfg["optim"]["max_steps"]
    step = start_step
    t0 = time.time()
    data_iter = iter(train_loader)
    epoch = 0
    while step < max_steps:
        lr = get_lr(step, cfg["optim"])
        for g in optimizer.param_groups:
            g["lr"] = lr

        for micro in range(grad_accum):
            try:
                x, y = next(data_iter)
            except StopIteration:
                epoch += 1
                if train_sampler is not None:
                    train_sampler.set_epoch(epoch)
                data_iter = iter(train_loader)
                x, y = next(data_iter)
            x = x.cuda(non_blocking=True)
            y = y.cuda(non_blocking=True)
            sync = micro == grad_accum - 1 or world_size == 1
            with (nullcontext() if sync else model.no_sync()):
                with ctx:
                    logits = model(x)
                    loss = loss_fn(logits.view(-1, logits.size(-1)), y.view(-1)) / grad_accum
                scaler.scale(loss).backward()

        scaler.unscale_(optimizer)
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), cfg["optim"]["grad_clip"])
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)

        if is_master and step % args.log_interval == 0:
            torch.cuda.synchronize()
            dt = (time.time() - t0) / args.log_interval
            t0 = time.time()
            tokens = cfg["train"]["micro_batch_size"] * cfg["data"]["seq_len"] * grad_accum * world_size
            mem = torch.cuda.max_memory_allocated() / 2**30
            print(
                f"step {step:6d} | loss {loss.item() * grad_accum:.4f} | lr {lr:.2e} | gnorm {grad_norm:.2f} "
                f"| {tokens / dt / 1e3:.1f}k tok/s | mem {mem:.1f}GB"
            )

        if step > 0 and step % cfg["train"]["eval_interval"] == 0:
            val_loss = evaluate(model, val_loader, loss_fn, ctx, device)
            if is_master:
                print(f"step {step}: val loss {val_loss:.4f}")
                raw = model.module if isinstance(model, DDP) else model
                os.makedirs(args.out_dir, exist_ok=True)
                torch.save(
                    {"model": raw.state_dict(), "optimizer": optimizer.state_dict(), "step": step, "config": cfg},
                    os.path.join(args.out_dir, f"ckpt_{step:07d}.pt"),
                )
            if world_size > 1:
                dist.barrier()
            torch.cuda.empty_cache()
        step += 1

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
