# Copyright (c) Facebook, Inc. and its affiliates. All rights reserved.
"""Single-process pipeline benchmark: splits a transformer LM across the local GPUs with fairscale.nn.Pipe."""

import argparse
import math
import time

import torch
import torch.nn as nn
from torch.optim import Adam

from fairscale.nn import Pipe
from fairscale.nn.pipe.balance import balance_by_time


class EmbeddingLayer(nn.Embedding):
    def __init__(self, ntoken, ninp, initrange):
        super().__init__(ntoken, ninp)
        self.ninp = ninp
        nn.init.uniform_(self.weight, -initrange, initrange)

    def forward(self, src):
        return super().forward(src) * math.sqrt(self.ninp)


class PositionalEncodingLayer(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return self.dropout(x + self.pe[:, : x.size(1)])


class FeedForwardBlock(nn.Module):
    def __init__(self, d_model, d_ff, dropout):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        return x + self.drop(self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x)))))


def build_layers(args):
    layers = [EmbeddingLayer(args.vocab, args.d_model, 0.1), PositionalEncodingLayer(args.d_model)]
    for _ in range(args.nlayers):
        layers.append(FeedForwardBlock(args.d_model, 4 * args.d_model, 0.1))
    layers.append(nn.Linear(args.d_model, args.vocab))
    return nn.Sequential(*layers)


def get_batch(args, device):
    data = torch.randint(0, args.vocab, (args.batch_size, args.seq_len + 1), device=device)
    return data[:, :-1], data[:, 1:]


def benchmark(args):
    num_devices = torch.cuda.device_count()
    assert num_devices >= 2, "pipe benchmark needs at least 2 GPUs"
    model = build_layers(args)

    if args.auto_balance:
        sample = torch.randint(0, args.vocab, (args.batch_size, args.seq_len))
        balance = balance_by_time(num_devices, model, sample, device=torch.device("cuda"))
    else:
        per = len(model) // num_devices
        balance = [per] * (num_devices - 1) + [len(model) - per * (num_devices - 1)]

    devices = [torch.device(f"cuda:{i}") for i in range(num_devices)]
    pipe = Pipe(model, balance=balance, devices=devices, chunks=args.chunks, checkpoint="except_last")
    optimizer = Adam(pipe.parameters(), lr=args.lr)
    criterion = nn.CrossEntropyLoss()

    in_device = pipe.devices[0]
    out_device = pipe.devices[-1]
    print(f"balance={balance} in_device={in_device} out_device={out_device}")

    pipe.train()
    total_tokens, start = 0, time.time()
    for i in range(args.steps):
        source, target = get_batch(args, in_device)
        optimizer.zero_grad()
        output = pipe(source)
        target = target.to(out_device)
        loss = criterion(output.view(-1, args.vocab), target.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_value_(pipe.parameters(), 0.05)
        optimizer.step()
        total_tokens += source.numel()
        if i % args.log_interval == 0:
            torch.cuda.synchronize(out_device)
            elapsed = time.time() - start
            print(f"| step {i:5d} | loss {loss.item():5.2f} | {total_tokens / elapsed:.0f} tok/s")

    for d in range(num_devices):
        print(f"cuda:{d} peak memory: {torch.cuda.max_memory_allocated(d) / 2**30:.2f} GiB")


def main():
    parser = argparse.ArgumentParser(description="fairscale Pipe benchmark (GPU)")
    parser.add_argument("--vocab", type=int, default=10000)
    parser.add_argument("--d-model", type=int, default=1024)
    parser.add_argument("--nlayers", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seq-len", type=int, default=512)
    parser.add_argument("--chunks", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--log-interval", type=int, default=20)
    parser.add_argument("--auto-balance", action="store_true")
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = True
    benchmark(args)


if __name__ == "__main__":
    main()
