"""Plain PyTorch training loop for TrOCR on historical line images.

We moved away from the HF Trainer because we need (a) curriculum sampling
over several collections (READ-2016, Bentham, Saint Gall) and (b) a custom
character-level CER early stopping with the Transkribus normalisation.

Typical use on one GPU:

    python -m trocr_htr.train --config configs/bentham.yaml

and on a node with several GPUs:

    torchrun --nproc_per_node 4 -m trocr_htr.train --config configs/bentham.yaml
"""
import argparse
import math
import os
import random
import time
from contextlib import nullcontext

import numpy as np
import torch
import torch.distributed as dist
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from transformers import TrOCRProcessor, VisionEncoderDecoderModel, get_cosine_schedule_with_warmup

from trocr_htr.data import LineDataset, MultiCollectionSampler, collate_lines
from trocr_htr.metrics import cer, normalise_transkribus
from trocr_htr.utils import AverageMeter, get_logger, save_checkpoint

logger = get_logger(__name__)


def setup_distributed():
    """Initialise torch.distributed when launched with torchrun."""
    if "RANK" not in os.environ:
        return 0, 1, 0
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    dist.barrier()
    return rank, world_size, local_rank


def seed_everything(seed: int, rank: int = 0):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def build_optimizer(model, cfg):
    no_decay = ("bias", "LayerNorm.weight", "layer_norm.weight")
    groups = [
        {
            "params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
            "weight_decay": cfg["weight_decay"],
        },
        {
            "params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
            "weight_decay": 0.0,
        },
    ]
    use_fused = cfg.get("fused_adam", True) and torch.cuda.is_available()
    try:
        from apex.optimizers import FusedAdam

        if use_fused:
            logger.info("Using apex FusedAdam")
            return FusedAdam(groups, lr=cfg["lr"], betas=(0.9, 0.999), eps=1e-8, adam_w_mode=True)
    except ImportError:
        pass
    return torch.optim.AdamW(groups, lr=cfg["lr"], betas=(0.9, 0.999), eps=1e-8)


@torch.no_grad()
def evaluate(model, processor, loader, device, amp_dtype, max_length=128, num_beams=4):
    model.eval()
    raw = model.module if isinstance(model, DDP) else model
    hyps, refs = [], []
    for batch in loader:
        pixel_values = batch["pixel_values"].to(device, non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=amp_dtype):
            generated = raw.generate(pixel_values, max_length=max_length, num_beams=num_beams)
        hyps.extend(processor.batch_decode(generated, skip_special_tokens=True))
        refs.extend(batch["text"])
    model.train()
    hyps = [normalise_transkribus(h) for h in hyps]
    refs = [normalise_transkribus(r) for r in refs]
    return cer(hyps, refs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--resume", default=None)
    parser.add_argument("--bf16", action="store_true", help="use bfloat16 autocast (A100/H100 only)")
    args = parser.parse_args()

    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    rank, world_size, local_rank = setup_distributed()
    seed_everything(cfg.get("seed", 1234), rank)
    is_main = rank == 0

    if torch.cuda.is_available():
        device = torch.device("cuda", local_rank)
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    else:
        device = torch.device("cpu")

    if args.bf16 and not torch.cuda.is_bf16_supported():
        raise SystemExit("--bf16 requested but this GPU has no bfloat16 support")
    amp_dtype = torch.bfloat16 if args.bf16 else torch.float16
    use_scaler = amp_dtype == torch.float16

    processor = TrOCRProcessor.from_pretrained(cfg["model_name"])
    model = VisionEncoderDecoderModel.from_pretrained(cfg["model_name"])
    model.config.decoder_start_token_id = processor.tokenizer.cls_token_id
    model.config.pad_token_id = processor.tokenizer.pad_token_id
    model.config.eos_token_id = processor.tokenizer.sep_token_id
    model.config.vocab_size = model.config.decoder.vocab_size
    if cfg.get("gradient_checkpointing"):
        model.gradient_checkpointing_enable()
    model.cuda(local_rank)

    train_set = LineDataset(cfg["train"], processor, augment=True)
    val_set = LineDataset(cfg["val"], processor, augment=False)
    if world_size > 1:
        sampler = DistributedSampler(train_set, shuffle=True)
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)
    else:
        sampler = MultiCollectionSampler(train_set, weights=cfg.get("collection_weights"))

    train_loader = DataLoader(
        train_set,
        batch_size=cfg["batch_size"],
        sampler=sampler,
        num_workers=cfg.get("num_workers", 8),
        pin_memory=True,
        drop_last=True,
        collate_fn=collate_lines,
        persistent_workers=True,
    )
    val_loader = DataLoader(val_set, batch_size=cfg["batch_size"], shuffle=False, num_workers=4, pin_memory=True, collate_fn=collate_lines)

    optimizer = build_optimizer(model, cfg)
    steps_per_epoch = len(train_loader) // cfg.get("grad_accum", 1)
    total_steps = steps_per_epoch * cfg["epochs"]
    scheduler = get_cosine_schedule_with_warmup(
        optimizer, num_warmup_steps=int(cfg.get("warmup_ratio", 0.05) * total_steps), num_training_steps=total_steps
    )
    scaler = torch.cuda.amp.GradScaler(enabled=use_scaler)

    start_epoch, best_cer = 0, math.inf
    if args.resume:
        state = torch.load(args.resume, map_location="cpu")
        (model.module if world_size > 1 else model).load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        scaler.load_state_dict(state["scaler"])
        start_epoch, best_cer = state["epoch"] + 1, state["best_cer"]
        logger.info("Resumed from %s (epoch %d, best CER %.4f)", args.resume, start_epoch, best_cer)

    grad_accum = cfg.get("grad_accum", 1)
    loss_meter = AverageMeter()
    for epoch in range(start_epoch, cfg["epochs"]):
        if isinstance(sampler, DistributedSampler):
            sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        for step, batch in enumerate(train_loader):
            pixel_values = batch["pixel_values"].cuda(non_blocking=True)
            labels = batch["labels"].cuda(non_blocking=True)
            sync_ctx = model.no_sync() if (world_size > 1 and (step + 1) % grad_accum != 0) else nullcontext()
            with sync_ctx:
                with torch.cuda.amp.autocast(dtype=amp_dtype):
                    outputs = model(pixel_values=pixel_values, labels=labels)
                    loss = outputs.loss / grad_accum
                scaler.scale(loss).backward()
            if (step + 1) % grad_accum == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.get("max_grad_norm", 1.0))
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
                scheduler.step()
            loss_meter.update(loss.item() * grad_accum, pixel_values.size(0))
            if is_main and step % cfg.get("log_every", 100) == 0:
                mem = torch.cuda.max_memory_allocated(device) / 2**30
                logger.info(
                    "epoch %d step %d/%d loss %.4f lr %.2e mem %.1fG %.1fs",
                    epoch, step, len(train_loader), loss_meter.avg, scheduler.get_last_lr()[0], mem, time.time() - t0,
                )

        if world_size > 1:
            dist.barrier()
        if is_main:
            val_cer = evaluate(model, processor, val_loader, device, amp_dtype)
            logger.info("epoch %d validation CER %.4f (best %.4f)", epoch, val_cer, best_cer)
            is_best = val_cer < best_cer
            best_cer = min(val_cer, best_cer)
            save_checkpoint(
                {
                    "model": (model.module if world_size > 1 else model).state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(),
                    "scaler": scaler.state_dict(),
                    "epoch": epoch,
                    "best_cer": best_cer,
                },
                is_best,
                cfg["output_dir"],
            )
        torch.cuda.empty_cache()

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
