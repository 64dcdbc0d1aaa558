"""Fine-tune a SigLIP checkpoint (HF transformers) with the sigmoid pairwise loss on an
image-text webdataset, torchrun-launched, bf16 autocast, flash-attention-2 towers.

    torchrun --nproc_per_node 8 train_siglip.py \
        --model google/siglip-so400m-patch14-384 --train-shards "data/{00000..01023}.tar" \
        --batch-size 128 --lr 1e-5 --steps 20000
"""
import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
import webdataset as wds
from torch.nn.parallel import DistributedDataParallel as DDP
from transformers import AutoProcessor, SiglipModel, get_cosine_schedule_with_warmup


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="google/siglip-base-patch16-224")
    p.add_argument("--train-shards", required=True)
    p.add_argument("--batch-size", type=int, default=256, help="per device")
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--wd", type=float, default=0.1)
    p.add_argument("--warmup", type=int, default=500)
    p.add_argument("--steps", type=int, default=10000)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--save-every", type=int, default=2000)
    p.add_argument("--output", default="checkpoints/siglip-ft")
    p.add_argument("--grad-checkpointing", action="store_true")
    p.add_argument("--compile", action="store_true")
    return p.parse_args()


def setup_distributed():
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    rank = int(os.environ.get("RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    torch.cuda.set_device(local_rank)
    if world_size > 1:
        dist.init_process_group("nccl", rank=rank, world_size=world_size)
    device = torch.device("cuda", local_rank)
    return rank, world_size, device


def make_loader(shards, processor, batch_size, workers):
    def preprocess(sample):
        image, text = sample
        pixel_values = processor.image_processor(image, return_tensors="pt")["pixel_values"][0]
        tokens = processor.tokenizer(text, padding="max_length", truncation=True, max_length=64,
                                     return_tensors="pt")["input_ids"][0]
        return pixel_values, tokens

    dataset = (
        wds.WebDataset(shards, resampled=True, shardshuffle=True, nodesplitter=wds.split_by_node)
        .shuffle(5000)
        .decode("pil")
        .to_tuple("jpg;png;webp", "txt")
        .map(preprocess)
        .batched(batch_size, partial=False)
    )
    return wds.WebLoader(dataset, batch_size=None, num_workers=workers, pin_memory=True,
                         pin_memory_device="cuda",
                         persistent_workers=True, prefetch_factor=4)


class SigmoidLoss(torch.nn.Module):
    """Chunked sigmoid loss: positives on the local block, negatives against every other rank's texts."""

    def __init__(self, rank, world_size):
        super().__init__()
        self.rank = rank
        self.world_size = world_size

    @staticmethod
    def _block(img, txt, t, b, positives):
        logits = img @ txt.T * t + b
        n = img.shape[0]
        labels = -torch.ones(n, txt.shape[0], device=img.device, dtype=img.dtype)
        if positives:
            labels += 2 * torch.eye(n, device=img.device, dtype=img.dtype)
        return -F.logsigmoid(labels * logits).sum() / n

    def forward(self, img, txt, logit_scale, logit_bias):
        t = logit_scale.exp()
        loss = self._block(img, txt, t, logit_bias, positives=True)
        if self.world_size > 1:
            gathered = [torch.empty_like(txt) for _ in range(self.world_size)]
            dist.all_gather(gathered, txt.contiguous())
            for r, other in enumerate(gathered):
                if r != self.rank:
                    loss = loss + self._block(img, other, t, logit_bias, positives=False)
        return loss


def main():
    args = parse_args()
    rank, world_size, device = setup_distributed()
    torch.manual_seed(1234 + rank)

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cuda.enable_flash_sdp(True)

    processor = AutoProcessor.from_pretrained(args.model)
    model = SiglipModel.from_pretrained(
        args.model,
        torch_dtype=torch.bfloat16,
        attn_implementation="flash_attention_2",
    ).to(device)
    # keep master weights in fp32; the towers run in bf16 under autocast
    model = model.float()
    if args.grad_checkpointing:
        model.gradient_checkpointing_enable()
    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    ddp_model = DDP(model, device_ids=[device.index]) if world_size > 1 else model
    raw = ddp_model.module if world_size > 1 else ddp_model

    decay, no_decay = [], []
    for n, p_ in raw.named_parameters():
        if not p_.requires_grad:
            continue
        (no_decay if p_.ndim < 2 or "bias" in n or "logit" in n else decay).append(p_)
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.wd}, {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr, betas=(0.9, 0.95), eps=1e-6, fused=True,
    )
    scheduler = get_cosine_schedule_with_warmup(optimizer, args.warmup, args.steps)
    criterion = SigmoidLoss(rank, world_size)

    loader = make_loader(args.train_shards, processor, args.batch_size, args.workers)

    ddp_model.train()
    step = 0
    t0 = time.time()
    for pixel_values, input_ids in loader:
        pixel_values = pixel_values.to(device, non_blocking=True)
        input_ids = input_ids.to(device, non_blocking=True)

        with torch.autocast("cuda", dtype=torch.bfloat16):
            out = ddp_model(pixel_values=pixel_values, input_ids=input_ids, return_loss=False)
            img = F.normalize(out.image_embeds, dim=-1)
            txt = F.normalize(out.text_embeds, dim=-1)
            loss = criterion(img.float(), txt.float(), raw.logit_scale, raw.logit_bias)

        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(ddp_model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        step += 1

        if rank == 0 and step % args.log_every == 0:
            torch.cuda.synchronize()
            dt = (time.time() - t0) / args.log_every
            t0 = time.time()
            mem = torch.cuda.max_memory_allocated(device) / 2**30
            print(f"step {step:6d} loss {loss.item():.4f} "
                  f"t {raw.logit_scale.exp().item():.2f} b {raw.logit_bias.item():.2f} "
                  f"{args.batch_size * world_size / dt:.0f} img/s  mem {mem:.1f}G  "
                  f"lr {scheduler.get_last_lr()[0]:.2e}", flush=True)

        if rank == 0 and step % args.save_every == 0:
            os.makedirs(args.output, exist_ok=True)
            raw.save_pretrained(os.path.join(args.output, f"step-{step}"))
            processor.save_pretrained(os.path.join(args.output, f"step-{step}"))

        if step >= args.steps:
            break

    if world_size > 1:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
