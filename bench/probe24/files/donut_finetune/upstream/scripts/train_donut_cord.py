#!/usr/bin/env python
"""Fine-tune Donut (VisionEncoderDecoder) on CORD receipts with plain PyTorch + DDP.

    torchrun --nproc_per_node 4 scripts/train_donut_cord.py --output_dir runs/donut-cord
"""
import argparse
import json
import math
import os
import random
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from datasets import load_dataset
from nltk import edit_distance
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from transformers import (DonutProcessor, VisionEncoderDecoderConfig,
                          VisionEncoderDecoderModel, get_cosine_schedule_with_warmup)

TASK_START = "<s_cord-v2>"


def json2token(obj, sort_json_key=True):
    if isinstance(obj, dict):
        if len(obj) == 1 and "text_sequence" in obj:
            return obj["text_sequence"]
        output = ""
        keys = sorted(obj.keys(), reverse=True) if sort_json_key else obj.keys()
        for k in keys:
            output += f"<s_{k}>" + json2token(obj[k], sort_json_key) + f"</s_{k}>"
        return output
    if isinstance(obj, list):
        return "<sep/>".join(json2token(item, sort_json_key) for item in obj)
    return str(obj)


class CordDataset(Dataset):
    def __init__(self, split, processor, max_length=768):
        self.ds = load_dataset("naver-clova-ix/cord-v2", split=split)
        self.processor = processor
        self.max_length = max_length

    def __len__(self):
        return len(self.ds)

    def __getitem__(self, idx):
        sample = self.ds[idx]
        pixel_values = self.processor(sample["image"].convert("RGB"), return_tensors="pt").pixel_values[0]
        gt = json.loads(sample["ground_truth"])["gt_parse"]
        target = TASK_START + json2token(gt) + self.processor.tokenizer.eos_token
        ids = self.processor.tokenizer(
            target, add_special_tokens=False, max_length=self.max_length,
            padding="max_length", truncation=True, return_tensors="pt").input_ids[0]
        labels = ids.clone()
        labels[labels == self.processor.tokenizer.pad_token_id] = -100
        return pixel_values, labels, target


def setup_distributed():
    if "RANK" not in os.environ:
        return 0, 0, 1
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    return rank, local_rank, world_size


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


@torch.no_grad()
def validate(model, processor, loader, device, max_length):
    model.eval()
    scores = []
    for pixel_values, _, answers in loader:
        pixel_values = pixel_values.to(device, non_blocking=True)
        decoder_input_ids = torch.full((pixel_values.size(0), 1),
                                       model.config.decoder_start_token_id, device=device)
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            outputs = model.generate(pixel_values, decoder_input_ids=decoder_input_ids,
                                     max_length=max_length, num_beams=1,
                                     pad_token_id=processor.tokenizer.pad_token_id,
                                     eos_token_id=processor.tokenizer.eos_token_id,
                                     bad_words_ids=[[processor.tokenizer.unk_token_id]])
        for seq, answer in zip(processor.batch_decode(outputs), answers):
            seq = seq.replace(processor.tokenizer.eos_token, "").replace(processor.tokenizer.pad_token, "")
            scores.append(edit_distance(seq, answer) / max(len(seq), len(answer)))
    model.train()
    return float(np.mean(scores)) if scores else math.nan


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="naver-clova-ix/donut-base")
    parser.add_argument("--output_dir", type=Path, required=True)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch_size", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--max_length", type=int, default=768)
    parser.add_argument("--image_size", type=int, nargs=2, default=[1280, 960])
    parser.add_argument("--fp16", action="store_true", help="mixed precision (needs a CUDA GPU)")
    parser.add_argument("--seed", type=int, default=2022)
    args = parser.parse_args()

    rank, local_rank, world_size = setup_distributed()
    seed_everything(args.seed + rank)
    device = torch.device(f"cuda:{local_rank}")

    config = VisionEncoderDecoderConfig.from_pretrained(args.model)
    config.encoder.image_size = args.image_size
    config.decoder.max_length = args.max_length
    processor = DonutProcessor.from_pretrained(args.model)
    processor.image_processor.size = args.image_size[::-1]
    processor.tokenizer.add_tokens([TASK_START, "<s_menu>", "</s_menu>", "<sep/>"])
    model = VisionEncoderDecoderModel.from_pretrained(args.model, config=config)
    model.decoder.resize_token_embeddings(len(processor.tokenizer))
    model.config.pad_token_id = processor.tokenizer.pad_token_id
    model.config.decoder_start_token_id = processor.tokenizer.convert_tokens_to_ids([TASK_START])[0]
    model.cuda()

    train_set = CordDataset("train", processor, args.max_length)
    val_set = CordDataset("validation", processor, args.max_length)
    sampler = DistributedSampler(train_set, shuffle=True) if world_size > 1 else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler,
                              shuffle=sampler is None, num_workers=4, pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=1, num_workers=2)

    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], find_unused_parameters=False)
    raw_model = model.module if isinstance(model, DDP) else model

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, fused=True)
    total_steps = args.epochs * len(train_loader)
    scheduler = get_cosine_schedule_with_warmup(optimizer, 300, total_steps)
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)

    best = math.inf
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for step, (pixel_values, labels, _) in enumerate(train_loader):
            pixel_values = pixel_values.cuda(non_blocking=True)
            labels = labels.cuda(non_blocking=True)
            with torch.cuda.amp.autocast(enabled=args.fp16):
                loss = model(pixel_values=pixel_values, labels=labels).loss
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
            if rank == 0 and step % 50 == 0:
                mem = torch.cuda.max_memory_allocated(device) / 2**30
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} mem {mem:.1f}G")

        if rank == 0:
            score = validate(raw_model, processor, val_loader, device, args.max_length)
            print(f"epoch {epoch}: normed edit distance {score:.4f}")
            if score < best:
                best = score
                raw_model.save_pretrained(args.output_dir / "best")
                processor.save_pretrained(args.output_dir / "best")
        if world_size > 1:
            dist.barrier()

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
