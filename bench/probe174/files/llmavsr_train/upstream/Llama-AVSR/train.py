"""DDP training loop for AVSR-LLM (launch with torchrun --nproc_per_node=8 train.py ...)."""

import argparse
import math
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from data.lrs3 import LRS3AVDataset, collate_av
from models.avsr_llm import AVSRLLM, AVSRLLMConfig
from utils.metrics import word_error_rate
from utils.lr import get_cosine_schedule_with_warmup


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data-root", required=True)
    p.add_argument("--train-manifest", default="lrs3_train.tsv")
    p.add_argument("--valid-manifest", default="lrs3_valid.tsv")
    p.add_argument("--avhubert-ckpt", required=True)
    p.add_argument("--llm-id", default="meta-llama/Meta-Llama-3.1-8B")
    p.add_argument("--modality", default="audiovisual", choices=["audio", "video", "audiovisual"])
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--grad-accum", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--warmup-steps", type=int, default=1000)
    p.add_argument("--num-workers", type=int, default=8)
    p.add_argument("--use-4bit", action="store_true")
    p.add_argument("--out-dir", default="exp/avsr_llm")
    p.add_argument("--log-every", type=int, default=50)
    return p.parse_args()


def setup_distributed():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    torch.cuda.set_device(local_rank)
    if world_size > 1:
        dist.init_process_group(backend="nccl", init_method="env://")
    return local_rank, world_size


def is_main():
    return not dist.is_initialized() or dist.get_rank() == 0


def build_loader(args, manifest, train, local_rank, world_size):
    ds = LRS3AVDataset(args.data_root, manifest, modality=args.modality, train=train)
    sampler = DistributedSampler(ds, shuffle=train) if world_size > 1 else None
    return DataLoader(
        ds,
        batch_size=args.batch_size,
        shuffle=(sampler is None and train),
        sampler=sampler,
        num_workers=args.num_workers,
        collate_fn=collate_av,
        pin_memory=True,
        pin_memory_device=f"cuda:{local_rank}",
        persistent_workers=args.num_workers > 0,
        drop_last=train,
    )


def to_device(batch, device):
    return {k: (v.to(device, non_blocking=True) if torch.is_tensor(v) else v) for k, v in batch.items()}


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    hyps, refs = [], []
    for batch in loader:
        batch = to_device(batch, device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = model.module.generate(batch) if isinstance(model, DDP) else model.generate(batch)
        hyps.extend(out)
        refs.extend(batch["transcripts"])
    model.train()
    return word_error_rate(hyps, refs)


def main():
    args = parse_args()
    local_rank, world_size = setup_distributed()
    device = torch.device("cuda", local_rank)
    torch.backends.cuda.matmul.allow_tf32 = True

    cfg = AVSRLLMConfig(llm_id=args.llm_id, avhubert_ckpt=args.avhubert_ckpt,
                        modality=args.modality, use_4bit=args.use_4bit)
    model = AVSRLLM(cfg).to(device)
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], find_unused_parameters=False)

    train_loader = build_loader(args, args.train_manifest, True, local_rank, world_size)
    valid_loader = build_loader(args, args.valid_manifest, False, local_rank, world_size)

    params = (model.module if isinstance(model, DDP) else model).trainable_parameters()
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01, fused=True)
    total_steps = math.ceil(len(train_loader) / args.grad_accum) * args.epochs
    scheduler = get_cosine_schedule_with_warmup(optimizer, args.warmup_steps, total_steps)

    os.makedirs(args.out_dir, exist_ok=True)
    step, best_wer = 0, float("inf")
    for epoch in range(args.epochs):
        if isinstance(train_loader.sampler, DistributedSampler):
            train_loader.sampler.set_epoch(epoch)
        t0 = time.time()
        for it, batch in enumerate(train_loader):
            batch = to_device(batch, device)
            with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
                loss = model(batch) / args.grad_accum
            loss.backward()
            if (it + 1) % args.grad_accum != 0:
                continue
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if step % args.log_every == 0 and is_main():
                mem = torch.cuda.max_memory_allocated(device) / 2 ** 30
                print(f"epoch {epoch} step {step} loss {loss.item() * args.grad_accum:.4f} "
                      f"lr {scheduler.get_last_lr()[0]:.2e} mem {mem:.1f}G {time.time() - t0:.1f}s")
                t0 = time.time()

        wer = validate(model, valid_loader, device)
        if is_main():
            print(f"epoch {epoch} valid WER {wer:.2f}")
            if wer < best_wer:
                best_wer = wer
                state = {k: v for k, v in (model.module if isinstance(model, DDP) else model).state_dict().items()
                         if "lora_" in k or "_proj." in k}
                torch.save(state, os.path.join(args.out_dir, "best.pt"))
        if dist.is_initialized():
            dist.barrier()

    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
