#!/usr/bin/env python
"""Fine-tune wav2vec 2.0 / XLS-R with a CTC head on Common Voice or LibriSpeech.

Single GPU:   python finetune_wav2vec2_ctc.py --train_manifest train.tsv --eval_manifest dev.tsv
Multi GPU:    torchrun --nproc_per_node=8 finetune_wav2vec2_ctc.py ...
"""
import argparse
import json
import math
import os
import random
import re
import time
from dataclasses import dataclass
from typing import Dict, List, Union

import numpy as np
import soundfile as sf
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

import jiwer
from transformers import (Wav2Vec2CTCTokenizer, Wav2Vec2FeatureExtractor, Wav2Vec2ForCTC,
                          Wav2Vec2Processor, get_linear_schedule_with_warmup)

CHARS_TO_IGNORE = r'[\,\?\.\!\-\;\:\"\“\%\‘\”\�]'


class ManifestDataset(Dataset):
    """TSV manifest: path<TAB>transcript. Audio is expected at 16 kHz."""

    def __init__(self, manifest, processor, max_seconds=16.0):
        self.items = []
        with open(manifest, encoding='utf-8') as f:
            for line in f:
                path, text = line.rstrip('\n').split('\t', 1)
                self.items.append((path, re.sub(CHARS_TO_IGNORE, '', text).lower()))
        self.processor = processor
        self.max_samples = int(max_seconds * 16000)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        path, text = self.items[idx]
        speech, sr = sf.read(path, dtype='float32')
        assert sr == 16000, f'{path}: expected 16 kHz audio, got {sr}'
        speech = speech[:self.max_samples]
        input_values = self.processor(speech, sampling_rate=16000).input_values[0]
        with self.processor.as_target_processor():
            labels = self.processor(text).input_ids
        return {'input_values': input_values, 'labels': labels}


@dataclass
class DataCollatorCTCWithPadding:
    processor: Wav2Vec2Processor
    padding: Union[bool, str] = True

    def __call__(self, features: List[Dict[str, Union[List[int], torch.Tensor]]]) -> Dict[str, torch.Tensor]:
        input_features = [{"input_values": f["input_values"]} for f in features]
        label_features = [{"input_ids": f["labels"]} for f in features]
        batch = self.processor.pad(input_features, padding=self.padding, return_tensors="pt")
        with self.processor.as_target_processor():
            labels_batch = self.processor.pad(label_features, padding=self.padding, return_tensors="pt")
        labels = labels_batch["input_ids"].masked_fill(labels_batch.attention_mask.ne(1), -100)
        batch["labels"] = labels
        return batch


def compute_wer(pred_ids, label_ids, processor):
    label_ids = label_ids.clone()
    label_ids[label_ids == -100] = processor.tokenizer.pad_token_id
    pred_str = processor.batch_decode(pred_ids)
    label_str = processor.batch_decode(label_ids, group_tokens=False)
    return jiwer.wer(label_str, pred_str)


def setup_distributed():
    if 'LOCAL_RANK' not in os.environ:
        return False, 0, 1
    local_rank = int(os.environ['LOCAL_RANK'])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    return True, local_rank, dist.get_world_size()


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument('--model_name', default='facebook/wav2vec2-large-xlsr-53')
    p.add_argument('--vocab', default='vocab.json')
    p.add_argument('--train_manifest', required=True)
    p.add_argument('--eval_manifest', required=True)
    p.add_argument('--output_dir', default='w2v2-ctc')
    p.add_argument('--batch_size', type=int, default=8)
    p.add_argument('--grad_accum', type=int, default=4)
    p.add_argument('--lr', type=float, default=3e-4)
    p.add_argument('--warmup_steps', type=int, default=500)
    p.add_argument('--max_steps', type=int, default=20000)
    p.add_argument('--eval_every', type=int, default=1000)
    p.add_argument('--seed', type=int, default=42)
    p.add_argument('--fp16', action='store_true')
    return p.parse_args()


def main():
    args = get_args()
    distributed, local_rank, world_size = setup_distributed()
    is_main = local_rank == 0
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if distributed:
        device = f"cuda:{local_rank}"

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    tokenizer = Wav2Vec2CTCTokenizer(args.vocab, unk_token="[UNK]", pad_token="[PAD]", word_delimiter_token="|")
    feature_extractor = Wav2Vec2FeatureExtractor(feature_size=1, sampling_rate=16000, padding_value=0.0,
                                                 do_normalize=True, return_attention_mask=True)
    processor = Wav2Vec2Processor(feature_extractor=feature_extractor, tokenizer=tokenizer)

    model = Wav2Vec2ForCTC.from_pretrained(
        args.model_name, attention_dropout=0.1, hidden_dropout=0.1, feat_proj_dropout=0.0,
        mask_time_prob=0.05, layerdrop=0.1, ctc_loss_reduction="mean",
        pad_token_id=processor.tokenizer.pad_token_id, vocab_size=len(processor.tokenizer))
    model.freeze_feature_encoder()
    model.gradient_checkpointing_enable()
    model.to(device)
    if distributed:
        model = DDP(model, device_ids=[local_rank], find_unused_parameters=True)

    collator = DataCollatorCTCWithPadding(processor=processor, padding=True)
    train_set = ManifestDataset(args.train_manifest, processor)
    eval_set = ManifestDataset(args.eval_manifest, processor)
    sampler = DistributedSampler(train_set, shuffle=True) if distributed else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=sampler is None, sampler=sampler,
                              collate_fn=collator, num_workers=4, pin_memory=True)
    eval_loader = DataLoader(eval_set, batch_size=args.batch_size, collate_fn=collator, num_workers=2)

    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr,
                                  weight_decay=0.005)
    scheduler = get_linear_schedule_with_warmup(optimizer, args.warmup_steps, args.max_steps)
    amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16 and amp_dtype == torch.float16)

    step, micro = 0, 0
    model.train()
    t0 = time.time()
    epoch = 0
    while step < args.max_steps:
        if sampler is not None:
            sampler.set_epoch(epoch)
        for batch in train_loader:
            batch = {k: v.to(device, non_blocking=True) for k, v in batch.items()}
            try:
                with torch.cuda.amp.autocast(enabled=args.fp16, dtype=amp_dtype):
                    loss = model(**batch).loss / args.grad_accum
                scaler.scale(loss).backward()
            except RuntimeError as e:
                if 'CUDA out of memory' in str(e):
                    print(f'[rank {local_rank}] OOM on a batch of {batch["input_values"].shape}, skipping')
                    optimizer.zero_grad(set_to_none=True)
                    torch.cuda.empty_cache()
                    continue
                raise
            micro += 1
            if micro % args.grad_accum:
                continue
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
            step += 1

            if is_main and step % 50 == 0:
                mem_gb = torch.cuda.memory_allocated() / 2 ** 30
                print(f'step {step} loss {loss.item() * args.grad_accum:.4f} lr {scheduler.get_last_lr()[0]:.2e} '
                      f'mem {mem_gb:.1f}GB {(time.time() - t0) / 50:.2f}s/step')
                t0 = time.time()

            if is_main and step % args.eval_every == 0:
                wer = evaluate(model.module if distributed else model, eval_loader, processor, device)
                print(f'step {step}: eval WER {wer:.4f}')
                (model.module if distributed else model).save_pretrained(os.path.join(args.output_dir, f'step-{step}'))
                processor.save_pretrained(os.path.join(args.output_dir, f'step-{step}'))
                model.train()
            if step >= args.max_steps:
                break
        epoch += 1


@torch.no_grad()
def evaluate(model, loader, processor, device):
    model.eval()
    wers = []
    for batch in loader:
        labels = batch.pop('labels')
        batch = {k: v.to(device) for k, v in batch.items()}
        logits = model(**batch).logits
        pred_ids = torch.argmax(logits, dim=-1).cpu()
        wers.append(compute_wer(pred_ids, labels, processor))
    return float(np.mean(wers)) if wers else math.nan


if __name__ == '__main__':
    main()
