"""
HuBERT/wav2vec2-style self-supervised speech pre-training with DeepSpeed ZeRO-2.

    deepspeed --num_gpus 8 ssl/pretrain_ds.py --manifest data/librilight_60k.tsv --labels data/km500 \
        --output-dir exp/hubert_base --max-updates 400000
"""
import argparse
import json
import logging
import math
import os
import time

import deepspeed
import torch
import torch.nn.functional as F
from deepspeed.accelerator import get_accelerator
from deepspeed.ops.adam import FusedAdam
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from ssl.data import BucketedAudioDataset, collate_audio
from ssl.model import HubertModel, HubertConfig

logger = logging.getLogger("pretrain")

os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--manifest", required=True)
    p.add_argument("--labels", required=True)
    p.add_argument("--output-dir", required=True)
    p.add_argument("--max-updates", type=int, default=400_000)
    p.add_argument("--max-tokens", type=int, default=1_400_000, help="audio samples per GPU batch")
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--warmup", type=int, default=32_000)
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--log-interval", type=int, default=200)
    p.add_argument("--save-interval", type=int, default=25_000)
    p.add_argument("--dp-debug", action="store_true", help="single-process DataParallel debug run")
    p.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    p = deepspeed.add_config_arguments(p)
    return p.parse_args()


def ds_config(args, world_size):
    return {
        "train_micro_batch_size_per_gpu": 1,  # batches are built by the bucketing sampler
        "gradient_accumulation_steps": args.grad_accum,
        "gradient_clipping": 10.0,
        "steps_per_print": args.log_interval,
        "fp16": {"enabled": True, "loss_scale": 0, "initial_scale_power": 7, "loss_scale_window": 128},
        "zero_optimization": {
            "stage": 2,
            "overlap_comm": True,
            "contiguous_gradients": True,
            "reduce_bucket_size": 5e8,
            "allgather_bucket_size": 5e8,
        },
        "communication_data_type": "fp16",
        "wall_clock_breakdown": False,
    }


def lr_lambda(step, warmup, total):
    if step < warmup:
        return step / max(1, warmup)
    return max(0.0, (total - step) / max(1, total - warmup))


def main():
    args = get_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s | %(levelname)s | %(message)s")

    torch.cuda.set_device(args.local_rank)
    deepspeed.init_distributed(dist_backend="nccl")
    rank = torch.distributed.get_rank()
    world_size = torch.distributed.get_world_size()
    device = torch.device(get_accelerator().device_name(), args.local_rank)

    cfg = HubertConfig.base(num_classes=500)
    model = HubertModel(cfg)
    if args.dp_debug:
        model = torch.nn.DataParallel(model).cuda()

    dataset = BucketedAudioDataset(args.manifest, args.labels, max_tokens=args.max_tokens, sample_rate=16000)
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True, seed=1337)
    loader = DataLoader(dataset, batch_size=None, sampler=sampler, num_workers=6, pin_memory=True,
                        collate_fn=collate_audio, persistent_workers=True)

    optimizer = FusedAdam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_lambda(s, args.warmup, args.max_updates))
    engine, optimizer, _, scheduler = deepspeed.initialize(
        model=model, optimizer=optimizer, lr_scheduler=scheduler, config=ds_config(args, world_size))

    update, epoch = 0, 0
    t0 = time.time()
    while update < args.max_updates:
        sampler.set_epoch(epoch)
        for batch in loader:
            wav = batch["source"].to(device, non_blocking=True).half()
            padding_mask = batch["padding_mask"].to(device, non_blocking=True)
            targets = batch["targets"].to(device, non_blocking=True)

            logits_m, logits_u, target_m, target_u = engine(wav, padding_mask=padding_mask, targets=targets)
            loss_m = F.cross_entropy(logits_m.float(), target_m, reduction="sum")
            loss_u = F.cross_entropy(logits_u.float(), target_u, reduction="sum") * 0.0
            sample_size = max(1, target_m.numel())
            loss = (loss_m + loss_u) / sample_size
            engine.backward(loss)
            engine.step()

            if engine.is_gradient_accumulation_boundary():
                update += 1
                if update % args.log_interval == 0 and rank == 0:
                    acc = (logits_m.argmax(-1) == target_m).float().mean().item()
                    mem = torch.cuda.max_memory_allocated(device) / 2**30
                    logger.info(json.dumps({
                        "update": update, "loss": round(loss.item(), 4), "acc_m": round(acc, 4),
                        "lr": scheduler.get_last_lr()[0], "ups": round(args.log_interval / (time.time() - t0), 2),
                        "mem_gb": round(mem, 2), "scale": optimizer.cur_scale,
                    }))
                    t0 = time.time()
                if update % args.save_interval == 0:
                    engine.save_checkpoint(args.output_dir, tag=f"update_{update}")
                if update >= args.max_updates:
                    break
        epoch += 1

    engine.save_checkpoint(args.output_dir, tag="last")
    get_accelerator().empty_cache()


if __name__ == "__main__":
    main()
