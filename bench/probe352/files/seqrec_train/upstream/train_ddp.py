"""Distributed training entry point for SASRec / BERT4Rec with gBCE loss.

    torchrun --nproc_per_node=4 train_ddp.py --config configs/sasrec_ml20m.yaml
    torchrun --nnodes=2 --node_rank=$RANK --master_addr=$MASTER --nproc_per_node=8 \
        train_ddp.py --config configs/sasrec_ml20m.yaml train.batch_size=256

Every rank trains on its shard of users (DistributedSampler); evaluation is done on
rank 0 only, with an exact top-k over the full item catalogue.
"""
import argparse
import contextlib
import datetime
import json
import logging
import math
import os
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from omegaconf import OmegaConf
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from seqrec.data import SequenceDataset, collate_train, collate_eval
from seqrec.losses import build_loss
from seqrec.metrics import ranking_metrics
from seqrec.models import build_model

try:
    import faiss  # faiss-gpu wheel, see requirements-gpu.txt
    HAS_FAISS = True
except ImportError:  # pragma: no cover
    HAS_FAISS = False

logger = logging.getLogger("seqrec")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--resume", default=None, help="checkpoint to resume from")
    parser.add_argument("overrides", nargs="*", help="dotlist overrides, e.g. train.lr=3e-4")
    return parser.parse_args()


def load_config(args):
    cfg = OmegaConf.load(args.config)
    if args.overrides:
        cfg = OmegaConf.merge(cfg, OmegaConf.from_dotlist(args.overrides))
    for k, v in (cfg.get("env") or {}).items():
        os.environ.setdefault(k, str(v))
    return cfg


def seed_everything(seed, rank):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def setup_distributed(cfg):
    if "RANK" not in os.environ:
        return 0, 0, 1
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(
        backend=cfg.dist.backend,
        init_method=cfg.dist.init_method,
        timeout=datetime.timedelta(minutes=cfg.dist.timeout_minutes),
    )
    if dist.get_backend() == "nccl":
        # all_gather_object goes through the device with NCCL; make sure it is the local one
        torch.cuda.synchronize()
    return rank, local_rank, world_size


def pick_amp_dtype(cfg):
    if cfg.train.amp_dtype == "bf16" and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    major, _ = torch.cuda.get_device_capability()
    if major < 7:
        return None  # no tensor cores, stay in fp32
    return torch.float16


def sdpa_context(backend):
    if backend == "flash":
        return torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False)
    if backend == "math":
        return torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=False)
    return contextlib.nullcontext()


def build_loaders(cfg, rank, world_size):
    train_set = SequenceDataset(cfg.data.root, split="train", max_len=cfg.data.max_seq_len)
    valid_set = SequenceDataset(cfg.data.root, split="valid", max_len=cfg.data.max_seq_len)
    sampler = DistributedSampler(train_set, num_replicas=world_size, rank=rank, shuffle=True, drop_last=True) \
        if world_size > 1 else None
    train_loader = DataLoader(
        train_set,
        batch_size=cfg.train.batch_size,
        sampler=sampler,
        shuffle=sampler is None,
        num_workers=cfg.data.num_workers,
        pin_memory=cfg.data.pin_memory,
        prefetch_factor=cfg.data.prefetch_factor,
        persistent_workers=True,
        collate_fn=collate_train,
        drop_last=True,
    )
    valid_loader = DataLoader(
        valid_set,
        batch_size=cfg.eval.batch_size,
        shuffle=False,
        num_workers=2,  # eval batches are tiny, no need to pin
        collate_fn=collate_eval,
    )
    return train_loader, valid_loader, sampler, train_set.num_items


@torch.no_grad()
def evaluate(model, loader, cfg, device):
    model.eval()
    item_emb = model.item_embeddings().float()  # [num_items + 1, d]
    index = None
    if cfg.eval.retrieval == "faiss" and HAS_FAISS:
        cpu_index = faiss.IndexFlatIP(item_emb.shape[1])
        if cfg.eval.faiss_use_gpu:
            res = faiss.StandardGpuResources()
            index = faiss.index_cpu_to_gpu(res, cfg.eval.faiss_gpu_id, cpu_index)
        else:
            index = cpu_index
        index.add(item_emb[1:].cpu().numpy())  # item 0 is padding

    k_max = max(int(m.split("@")[1]) for m in cfg.eval.metrics)
    all_topk, all_targets = [], []
    for batch in loader:
        seqs = batch["input_ids"].to(device, non_blocking=True)
        targets = batch["target"]
        user_repr = model.encode(seqs)[:, -1, :].float()
        if index is not None:
            _, topk = index.search(user_repr.cpu().numpy(), k_max)
            topk = torch.from_numpy(topk) + 1
        else:
            scores = user_repr @ item_emb.t()
            scores[:, 0] = -float("inf")
            topk = scores.topk(k_max, dim=-1).indices.cpu()
        all_topk.append(topk)
        all_targets.append(targets)
    model.train()
    return ranking_metrics(torch.cat(all_topk), torch.cat(all_targets), cfg.eval.metrics)


def main():
    args = parse_args()
    cfg = load_config(args)
    rank, local_rank, world_size = setup_distributed(cfg)
    is_main = rank == 0
    logging.basicConfig(level=logging.INFO if is_main else logging.WARNING,
                        format="%(asctime)s [rank%(process)d] %(message)s")
    seed_everything(cfg.seed, rank)

    device = torch.device(cfg.train.device, local_rank)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    train_loader, valid_loader, sampler, num_items = build_loaders(cfg, rank, world_size)
    model = build_model(cfg.model, num_items=num_items).to(device)
    raw_model = model

    if cfg.train.compile:
        model = torch.compile(model, mode=cfg.train.compile_mode)
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank,
                    find_unused_parameters=cfg.dist.find_unused_parameters, gradient_as_bucket_view=True)

    use_fused = cfg.train.fused_adam and torch.cuda.is_available()
    optimizer = torch.optim.AdamW(raw_model.parameters(), lr=cfg.train.lr,
                                  weight_decay=cfg.train.weight_decay, fused=use_fused)
    loss_fn = build_loss(cfg.loss, num_items=num_items)

    amp_dtype = pick_amp_dtype(cfg)
    scaler = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)

    start_epoch, best_ndcg, bad_epochs = 0, -1.0, 0
    out_dir = Path(cfg.output.dir)
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        raw_model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start_epoch, best_ndcg = ckpt["epoch"] + 1, ckpt["best_ndcg"]
        if is_main:
            logger.info("resumed from %s (epoch %d)", args.resume, ckpt["epoch"])

    if is_main:
        out_dir.mkdir(parents=True, exist_ok=True)
        OmegaConf.save(cfg, out_dir / "config.yaml")
        logger.info("world_size=%d, device=%s, amp=%s, gpu=%s", world_size, device, amp_dtype,
                    torch.cuda.get_device_name(local_rank))

    step = 0
    for epoch in range(start_epoch, cfg.train.max_epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        t0 = time.time()
        running = 0.0
        for batch in train_loader:
            seqs = batch["input_ids"].to(device, non_blocking=True)
            labels = batch["labels"].to(device, non_blocking=True)
            negatives = batch["negatives"].to(device, non_blocking=True)

            with torch.autocast(device_type="cuda", dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
                with sdpa_context(cfg.model.attention_backend):
                    hidden = model(seqs)
                loss = loss_fn(hidden, labels, negatives, raw_model.item_embeddings())

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            if cfg.train.grad_clip:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(raw_model.parameters(), cfg.train.grad_clip)
            scaler.step(optimizer)
            scaler.update()

            running += loss.item()
            step += 1
            if is_main and step % cfg.train.log_every == 0:
                mem = torch.cuda.max_memory_allocated(device) / 2 ** 30
                logger.info("epoch %d step %d loss %.4f | %.1f GiB", epoch, step,
                            running / cfg.train.log_every, mem)
                running = 0.0

        if world_size > 1:
            dist.barrier()

        if is_main and (epoch + 1) % cfg.eval.every_n_epochs == 0:
            metrics = evaluate(raw_model, valid_loader, cfg, device)
            logger.info("epoch %d (%.0fs) %s", epoch, time.time() - t0, json.dumps(metrics))
            if metrics["ndcg@10"] > best_ndcg:
                best_ndcg, bad_epochs = metrics["ndcg@10"], 0
                torch.save({"model": raw_model.state_dict(), "optimizer": optimizer.state_dict(),
                            "epoch": epoch, "best_ndcg": best_ndcg}, out_dir / "best.pt")
            else:
                bad_epochs += cfg.eval.every_n_epochs
            if bad_epochs >= cfg.train.early_stopping_patience:
                logger.info("early stopping at epoch %d (best ndcg@10=%.4f)", epoch, best_ndcg)
                break

        # keep every rank in lock-step on the early-stop decision
        stop = torch.tensor([bad_epochs >= cfg.train.early_stopping_patience], device=device)
        if world_size > 1:
            dist.broadcast(stop, src=0)
        if stop.item():
            break

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
