"""Transformer NMT (Vaswani et al., 2017) on IWSLT'14 De-En, no fairseq.

Single GPU:
    python nmt/train_transformer.py --data data-bin/iwslt14 --amp
Multi GPU (one process per GPU):
    torchrun --nproc_per_node=8 nmt/train_transformer.py --data data-bin/iwslt14 --amp

The data directory holds ``{train,valid,test}.{de,en}.pt`` (lists of id tensors)
and ``vocab.json`` as produced by ``nmt/preprocess.py``.
"""
import argparse
import json
import math
import os
import time
from contextlib import nullcontext
from typing import List, Tuple

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

try:
    from apex.optimizers import FusedAdam

    HAS_APEX = True
except ImportError:
    HAS_APEX = False

PAD, BOS, EOS, UNK = 0, 1, 2, 3


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--save-dir", default="checkpoints/transformer_iwslt")
    p.add_argument("--d-model", type=int, default=512)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=1024)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--dropout", type=float, default=0.3)
    p.add_argument("--label-smoothing", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--warmup", type=int, default=4000)
    p.add_argument("--max-tokens", type=int, default=4096)
    p.add_argument("--max-epoch", type=int, default=60)
    p.add_argument("--amp", action="store_true")
    p.add_argument("--bf16", action="store_true", help="use bfloat16 autocast instead of fp16 (Ampere+)")
    p.add_argument("--fused-adam", action="store_true", help="use apex FusedAdam if installed")
    p.add_argument("--num-workers", type=int, default=4)
    p.add_argument("--log-interval", type=int, default=100)
    return p.parse_args()


class ParallelDataset(Dataset):
    def __init__(self, src: List[torch.Tensor], tgt: List[torch.Tensor]):
        assert len(src) == len(tgt)
        self.src, self.tgt = src, tgt

    def __len__(self):
        return len(self.src)

    def __getitem__(self, i):
        return self.src[i], self.tgt[i]


def collate(batch) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    srcs, tgts = zip(*batch)
    src = nn.utils.rnn.pad_sequence(srcs, batch_first=True, padding_value=PAD)
    tgt_in = nn.utils.rnn.pad_sequence([torch.cat([torch.tensor([BOS]), t]) for t in tgts], batch_first=True, padding_value=PAD)
    tgt_out = nn.utils.rnn.pad_sequence([torch.cat([t, torch.tensor([EOS])]) for t in tgts], batch_first=True, padding_value=PAD)
    return src, tgt_in, tgt_out


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, max_len: int = 1024):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        pos = torch.arange(0, max_len).unsqueeze(1).float()
        div = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe.unsqueeze(0), persistent=False)

    def forward(self, x):
        return x + self.pe[:, : x.size(1)]


class TransformerNMT(nn.Module):
    def __init__(self, vocab_size: int, args):
        super().__init__()
        self.d_model = args.d_model
        self.embed = nn.Embedding(vocab_size, args.d_model, padding_idx=PAD)
        self.pos = PositionalEncoding(args.d_model)
        self.transformer = nn.Transformer(
            d_model=args.d_model,
            nhead=args.heads,
            num_encoder_layers=args.layers,
            num_decoder_layers=args.layers,
            dim_feedforward=args.ffn,
            dropout=args.dropout,
            batch_first=True,
            norm_first=True,
        )
        self.out = nn.Linear(args.d_model, vocab_size, bias=False)
        self.out.weight = self.embed.weight  # tie input/output embeddings

    def forward(self, src, tgt_in):
        src_pad = src.eq(PAD)
        tgt_pad = tgt_in.eq(PAD)
        causal = nn.Transformer.generate_square_subsequent_mask(tgt_in.size(1), device=tgt_in.device)
        s = self.pos(self.embed(src) * math.sqrt(self.d_model))
        t = self.pos(self.embed(tgt_in) * math.sqrt(self.d_model))
        h = self.transformer(
            s, t,
            tgt_mask=causal,
            src_key_padding_mask=src_pad,
            tgt_key_padding_mask=tgt_pad,
            memory_key_padding_mask=src_pad,
        )
        return self.out(h)


def inverse_sqrt(step: int, warmup: int) -> float:
    step = max(step, 1)
    return min(step / warmup, math.sqrt(warmup / step))


def setup_distributed():
    if "RANK" not in os.environ:
        return 0, 1, 0
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    return rank, world_size, local_rank


def main():
    args = get_args()
    rank, world_size, local_rank = setup_distributed()
    is_main = rank == 0
    device = torch.device("cuda", local_rank)

    # TF32 matmuls are a free ~2x on Ampere for the fp32 parts (softmax/layernorm stay fp32)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    if args.bf16 and torch.cuda.get_device_capability(device)[0] < 8:
        raise SystemExit("--bf16 needs an Ampere (sm_80) or newer GPU")
    amp_dtype = torch.bfloat16 if args.bf16 else torch.float16

    with open(os.path.join(args.data, "vocab.json")) as f:
        vocab = json.load(f)
    train = ParallelDataset(torch.load(os.path.join(args.data, "train.de.pt")), torch.load(os.path.join(args.data, "train.en.pt")))
    valid = ParallelDataset(torch.load(os.path.join(args.data, "valid.de.pt")), torch.load(os.path.join(args.data, "valid.en.pt")))
    sampler = DistributedSampler(train, num_replicas=world_size, rank=rank, shuffle=True) if world_size > 1 else None
    batch_size = max(1, args.max_tokens // 32)
    train_loader = DataLoader(train, batch_size=batch_size, shuffle=sampler is None, sampler=sampler,
                              collate_fn=collate, num_workers=args.num_workers, pin_memory=True, drop_last=True)
    valid_loader = DataLoader(valid, batch_size=batch_size, collate_fn=collate, num_workers=2, pin_memory=True)

    model = TransformerNMT(len(vocab), args).to(device)
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)

    if args.fused_adam and HAS_APEX:
        optimizer = FusedAdam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9, weight_decay=1e-4)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: inverse_sqrt(s, args.warmup))
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and not args.bf16)

    step = 0
    best = float("inf")
    os.makedirs(args.save_dir, exist_ok=True)
    for epoch in range(1, args.max_epoch + 1):
        if sampler is not None:
            sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        for src, tgt_in, tgt_out in train_loader:
            src = src.to(device, non_blocking=True)
            tgt_in = tgt_in.to(device, non_blocking=True)
            tgt_out = tgt_out.to(device, non_blocking=True)
            with torch.cuda.amp.autocast(enabled=args.amp, dtype=amp_dtype):
                # route nn.MultiheadAttention's fast path to the flash kernel
                with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):
                    logits = model(src, tgt_in)
                loss = F.cross_entropy(logits.float().view(-1, logits.size(-1)), tgt_out.view(-1),
                                       ignore_index=PAD, label_smoothing=args.label_smoothing)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 0.0 or 1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1
            if is_main and step % args.log_interval == 0:
                mem = torch.cuda.max_memory_allocated(device) / 2 ** 30
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.2e} "
                      f"mem {mem:.1f}G {(time.time() - t0):.0f}s", flush=True)

        # validation
        model.eval()
        tot, n = 0.0, 0
        with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.amp, dtype=amp_dtype):
            for src, tgt_in, tgt_out in valid_loader:
                src, tgt_in, tgt_out = src.cuda(), tgt_in.cuda(), tgt_out.cuda()
                logits = model(src, tgt_in)
                l = F.cross_entropy(logits.float().view(-1, logits.size(-1)), tgt_out.view(-1), ignore_index=PAD, reduction="sum")
                tot += l.item()
                n += tgt_out.ne(PAD).sum().item()
        if world_size > 1:
            t = torch.tensor([tot, n], device=device, dtype=torch.float64)
            dist.all_reduce(t)
            tot, n = t.tolist()
        val_loss = tot / max(n, 1)
        if is_main:
            print(f"| epoch {epoch} | valid loss {val_loss:.4f} | ppl {math.exp(val_loss):.2f}", flush=True)
            if val_loss < best:
                best = val_loss
                state = model.module.state_dict() if world_size > 1 else model.state_dict()
                torch.save({"model": state, "args": vars(args), "epoch": epoch}, os.path.join(args.save_dir, "checkpoint_best.pt"))

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
