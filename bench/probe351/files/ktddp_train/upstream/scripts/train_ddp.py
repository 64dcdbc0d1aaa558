#!/usr/bin/env python
"""Multi-GPU training of attention-based KT models (simpleKT / AKT-style) on EdNet-KT1 and
ASSISTments 2012 with DistributedDataParallel.

Launch with torchrun (see scripts/launch_ddp.sh):

    torchrun --nproc_per_node=8 scripts/train_ddp.py --config configs/ednet_ddp.yaml

Everything model-specific lives in kt/models; this script only does the distributed plumbing,
mixed precision, checkpointing and AUC aggregation across ranks.
"""
import argparse
import json
import math
import os
import time
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import yaml
from sklearn.metrics import roc_auc_score
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from kt.data import KTSequenceDataset, collate_kt
from kt.utils import AverageMeter, get_logger, cosine_with_warmup

logger = get_logger(__name__)


# --------------------------------------------------------------------------------------------
# model
# --------------------------------------------------------------------------------------------
class KTBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, dropout):
        super().__init__()
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Dropout(dropout), nn.Linear(d_ff, d_model))
        self.dropout = dropout

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q = q.view(b, s, self.n_heads, self.d_head).transpose(1, 2)
        k = k.view(b, s, self.n_heads, self.d_head).transpose(1, 2)
        v = v.view(b, s, self.n_heads, self.d_head).transpose(1, 2)
        # flash attention kernel on Ampere+; falls back to the math kernel elsewhere
        with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=False):
            attn = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                  dropout_p=self.dropout if self.training else 0.0)
        attn = attn.transpose(1, 2).reshape(b, s, d)
        x = x + F.dropout(self.proj(attn), self.dropout, self.training)
        x = x + F.dropout(self.ff(self.ln2(x)), self.dropout, self.training)
        return x


class SimpleKTLarge(nn.Module):
    def __init__(self, num_q, num_c, d_model=256, n_heads=8, n_blocks=4, d_ff=1024, dropout=0.1, max_len=512):
        super().__init__()
        self.num_c = num_c
        self.q_emb = nn.Embedding(num_q + 1, d_model, padding_idx=0)
        self.c_emb = nn.Embedding(num_c + 1, d_model, padding_idx=0)
        self.r_emb = nn.Embedding(3, d_model)
        self.pos_emb = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList([KTBlock(d_model, n_heads, d_ff, dropout) for _ in range(n_blocks)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Sequential(nn.Linear(2 * d_model, d_model), nn.ReLU(), nn.Dropout(dropout), nn.Linear(d_model, 1))

    def forward(self, q, c, r):
        pos = torch.arange(q.size(1), device=q.device).unsqueeze(0)
        x = self.q_emb(q) + self.c_emb(c) + self.r_emb(r) + self.pos_emb(pos)
        for blk in self.blocks:
            x = blk(x)
        h = self.ln_f(x)
        # predict step t+1 from the history up to t and the embedding of the next question
        nxt = self.q_emb(q[:, 1:]) + self.c_emb(c[:, 1:])
        return self.head(torch.cat([h[:, :-1], nxt], dim=-1)).squeeze(-1)


# --------------------------------------------------------------------------------------------
# distributed helpers
# --------------------------------------------------------------------------------------------
def setup_distributed(backend):
    if "RANK" not in os.environ:
        # single-process debug run
        os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", MASTER_ADDR="127.0.0.1", MASTER_PORT="29500")
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend=backend, init_method="env://", world_size=world_size, rank=rank,
                            timeout=timedelta(minutes=30))
    dist.barrier(device_ids=[local_rank])
    return rank, world_size, local_rank


def reduce_mean(value):
    t = torch.tensor([value], dtype=torch.float64)
    if dist.get_backend() == "nccl":
        t = t.cuda()
    dist.all_reduce(t)
    return (t / dist.get_world_size()).item()


def gather_predictions(preds, labels):
    """all_gather variable-length prediction vectors so that rank 0 can compute the exact AUC."""
    world = dist.get_world_size()
    n = torch.tensor([preds.numel()], device=preds.device)
    sizes = [torch.zeros_like(n) for _ in range(world)]
    dist.all_gather(sizes, n)
    max_n = int(max(s.item() for s in sizes))
    pad_p = torch.zeros(max_n, device=preds.device, dtype=preds.dtype)
    pad_l = torch.zeros(max_n, device=preds.device, dtype=preds.dtype)
    pad_p[:preds.numel()] = preds
    pad_l[:labels.numel()] = labels
    all_p = [torch.zeros_like(pad_p) for _ in range(world)]
    all_l = [torch.zeros_like(pad_l) for _ in range(world)]
    dist.all_gather(all_p, pad_p)
    dist.all_gather(all_l, pad_l)
    out_p = torch.cat([p[:int(s.item())] for p, s in zip(all_p, sizes)])
    out_l = torch.cat([l[:int(s.item())] for l, s in zip(all_l, sizes)])
    return out_p.cpu().numpy(), out_l.cpu().numpy()


# --------------------------------------------------------------------------------------------
# train / eval
# --------------------------------------------------------------------------------------------
def run_epoch(model, loader, optimizer, scheduler, scaler, amp_dtype, args, train=True):
    model.train(train)
    meter = AverageMeter()
    all_p, all_l = [], []
    for step, batch in enumerate(loader):
        q = batch["q"].cuda(non_blocking=True)
        c = batch["c"].cuda(non_blocking=True)
        r = batch["r"].cuda(non_blocking=True)
        mask = batch["mask"].cuda(non_blocking=True)[:, 1:]
        y = batch["r"][:, 1:].float().cuda(non_blocking=True)
        with torch.set_grad_enabled(train), torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp):
            logits = model(q, c, r.clamp(min=0))
            loss = F.binary_cross_entropy_with_logits(logits[mask].float(), y[mask])
        if train:
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
        else:
            all_p.append(torch.sigmoid(logits[mask].float()))
            all_l.append(y[mask])
        meter.update(loss.item(), int(mask.sum()))
        if train and step % args.log_every == 0 and dist.get_rank() == 0:
            logger.info(f"step {step}/{len(loader)} loss {meter.avg:.4f} lr {scheduler.get_last_lr()[0]:.2e} "
                        f"mem {torch.cuda.max_memory_allocated() / 2**30:.1f}G")
    if train:
        return reduce_mean(meter.avg), None
    preds, labels = gather_predictions(torch.cat(all_p), torch.cat(all_l))
    auc = roc_auc_score(labels, preds) if dist.get_rank() == 0 else -1.0
    return reduce_mean(meter.avg), auc


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, required=True)
    parser.add_argument("--backend", type=str, default=None, choices=["nccl", "gloo"],
                        help="overrides runtime.dist_backend from the config")
    parser.add_argument("--amp", action="store_true", default=True)
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--fused_adam", action="store_true", help="use apex FusedAdam (needs apex built with --cuda_ext)")
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--log_every", type=int, default=100)
    parser.add_argument("--out_dir", type=str, default="runs/ddp")
    parser.add_argument("--resume", type=str, default="", help="checkpoint written by a previous run (best.pt / last.pt)")
    parser.add_argument("--test", action="store_true", help="evaluate best.pt on the test split after training")
    parser.add_argument("--debug_mem", action="store_true")
    args = parser.parse_args()

    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    runtime = cfg.get("runtime", {})
    backend = args.backend or runtime.get("dist_backend", "nccl")
    rank, world_size, local_rank = setup_distributed(backend)
    torch.manual_seed(cfg["seed"] + rank)
    np.random.seed(cfg["seed"] + rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = runtime.get("cudnn_benchmark", False)
    args.amp = runtime.get("amp", args.amp)

    amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if rank == 0:
        logger.info(f"world_size={world_size} amp_dtype={amp_dtype} config={json.dumps(cfg)}")

    train_set = KTSequenceDataset(cfg["data"]["train"], max_len=cfg["model"]["max_len"])
    valid_set = KTSequenceDataset(cfg["data"]["valid"], max_len=cfg["model"]["max_len"])
    train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True)
    valid_sampler = DistributedSampler(valid_set, num_replicas=world_size, rank=rank, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=cfg["batch_size"], sampler=train_sampler, num_workers=cfg["num_workers"],
                              pin_memory=True, collate_fn=collate_kt, drop_last=True, persistent_workers=True)
    valid_loader = DataLoader(valid_set, batch_size=cfg["batch_size"], sampler=valid_sampler, num_workers=cfg["num_workers"],
                              pin_memory=True, collate_fn=collate_kt)

    model = SimpleKTLarge(num_q=train_set.num_q, num_c=train_set.num_c, **cfg["model"]).cuda(local_rank)
    model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    if args.fused_adam:
        from apex.optimizers import FusedAdam
        optimizer = FusedAdam(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"], adam_w_mode=True)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=cfg["weight_decay"],
                                      fused=torch.cuda.is_available())
    total_steps = cfg["epochs"] * len(train_loader)
    scheduler = cosine_with_warmup(optimizer, warmup_steps=cfg["warmup_steps"], total_steps=total_steps)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)

    os.makedirs(args.out_dir, exist_ok=True)
    best_auc = 0.0
    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")
        model_to_load = model._orig_mod.module if hasattr(model, "_orig_mod") else model.module
        model_to_load.load_state_dict(ckpt["model"])
        if "optimizer" in ckpt:
            optimizer.load_state_dict(ckpt["optimizer"])
        start_epoch = ckpt["epoch"] + 1
        best_auc = ckpt.get("auc", 0.0)
        if rank == 0:
            logger.info(f"resumed from {args.resume} at epoch {start_epoch} (best auc {best_auc:.4f})")
        for _ in range(start_epoch * len(train_loader)):
            scheduler.step()

    for epoch in range(start_epoch, cfg["epochs"]):
        train_sampler.set_epoch(epoch)
        t0 = time.time()
        train_loss, _ = run_epoch(model, train_loader, optimizer, scheduler, scaler, amp_dtype, args, train=True)
        with torch.no_grad():
            valid_loss, valid_auc = run_epoch(model, valid_loader, optimizer, scheduler, scaler, amp_dtype, args, train=False)
        torch.cuda.synchronize()
        if rank == 0:
            logger.info(f"epoch {epoch} train_loss {train_loss:.4f} valid_loss {valid_loss:.4f} "
                        f"valid_auc {valid_auc:.4f} time {time.time() - t0:.0f}s")
            if valid_auc > best_auc:
                best_auc = valid_auc
                state = model.module.state_dict() if hasattr(model, "module") else model._orig_mod.module.state_dict()
                torch.save({"model": state, "epoch": epoch, "auc": valid_auc, "cfg": cfg},
                           os.path.join(args.out_dir, "best.pt"))
            torch.save({"model": state_dict_of(model), "optimizer": optimizer.state_dict(), "epoch": epoch,
                        "auc": best_auc, "cfg": cfg}, os.path.join(args.out_dir, "last.pt"))
        if args.debug_mem and rank == 0:
            logger.info(torch.cuda.memory_summary(abbreviated=True))
        dist.barrier()

    if rank == 0:
        logger.info(f"best valid auc {best_auc:.4f}")

    if args.test and "test" in cfg["data"]:
        test_set = KTSequenceDataset(cfg["data"]["test"], max_len=cfg["model"]["max_len"])
        test_loader = DataLoader(test_set, batch_size=cfg["batch_size"], num_workers=cfg["num_workers"], pin_memory=True,
                                 sampler=DistributedSampler(test_set, num_replicas=world_size, rank=rank, shuffle=False),
                                 collate_fn=collate_kt)
        best = torch.load(os.path.join(args.out_dir, "best.pt"), map_location="cpu")
        (model._orig_mod.module if hasattr(model, "_orig_mod") else model.module).load_state_dict(best["model"])
        with torch.no_grad():
            test_loss, test_auc = run_epoch(model, test_loader, optimizer, scheduler, scaler, amp_dtype, args, train=False)
        if rank == 0:
            logger.info(f"test_loss {test_loss:.4f} test_auc {test_auc:.4f} (best epoch {best['epoch']})")
            with open(os.path.join(args.out_dir, "test_metrics.json"), "w") as f:
                json.dump({"test_auc": test_auc, "test_loss": test_loss, "best_epoch": best["epoch"]}, f)
    dist.destroy_process_group()


def state_dict_of(model):
    inner = model._orig_mod if hasattr(model, "_orig_mod") else model
    return inner.module.state_dict() if hasattr(inner, "module") else inner.state_dict()


if __name__ == "__main__":
    main()
