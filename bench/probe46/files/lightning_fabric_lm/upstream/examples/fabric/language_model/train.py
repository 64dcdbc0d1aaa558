"""Train a small Transformer language model on WikiText-2 with Lightning Fabric.

    fabric run --accelerator=cuda --devices=2 --strategy=ddp examples/fabric/language_model/train.py
    python examples/fabric/language_model/train.py --devices 1 --precision bf16-mixed

Fabric takes care of device placement, the process group and mixed precision; the script
itself stays plain PyTorch.
"""
import argparse
import math
import time

import lightning as L
import torch
import torch.nn as nn
import torch.nn.functional as F
from lightning.pytorch.demos import WikiText2
from torch.utils.data import DataLoader, random_split


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int, dropout: float):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_head = n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.dropout = dropout

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, n_embd: int, n_head: int, dropout: float):
        super().__init__()
        self.ln1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout)
        self.ln2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(approximate="tanh"), nn.Linear(4 * n_embd, n_embd))
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        x = x + self.drop(self.attn(self.ln1(x)))
        x = x + self.drop(self.mlp(self.ln2(x)))
        return x


class TinyLM(nn.Module):
    def __init__(self, vocab_size: int, block_size: int, n_layer: int = 4, n_head: int = 4, n_embd: int = 256,
                 dropout: float = 0.1):
        super().__init__()
        self.block_size = block_size
        self.tok = nn.Embedding(vocab_size, n_embd)
        self.pos = nn.Embedding(block_size, n_embd)
        self.blocks = nn.ModuleList([Block(n_embd, n_head, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, idx):
        T = idx.size(1)
        pos = torch.arange(T, device=idx.device)
        x = self.tok(idx) + self.pos(pos)[None]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accelerator", default="cuda")
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--strategy", default="ddp")
    parser.add_argument("--precision", default="16-mixed")
    parser.add_argument("--block-size", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--max-steps", type=int, default=2000)
    parser.add_argument("--compile", action="store_true")
    return parser.parse_args()


def validate(fabric, model, loader):
    model.eval()
    losses = []
    with torch.no_grad():
        for input, target in loader:
            logits = model(input)
            losses.append(F.cross_entropy(logits.view(-1, logits.size(-1)), target.view(-1)))
    loss = fabric.all_reduce(torch.stack(losses).mean(), reduce_op="mean")
    model.train()
    return loss.item()


def main(args):
    torch.set_float32_matmul_precision("high")
    torch.backends.cuda.matmul.allow_tf32 = True

    fabric = L.Fabric(accelerator=args.accelerator, devices=args.devices, strategy=args.strategy,
                      precision=args.precision)
    fabric.launch()
    fabric.seed_everything(42)

    with fabric.rank_zero_first():
        dataset = WikiText2(block_size=args.block_size)
    n_val = len(dataset) // 10
    train_set, val_set = random_split(dataset, [len(dataset) - n_val, n_val])
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=2, pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, num_workers=2)
    train_loader, val_loader = fabric.setup_dataloaders(train_loader, val_loader)

    with fabric.init_module():
        model = TinyLM(dataset.vocab_size, args.block_size)
    if args.compile:
        model = torch.compile(model, mode="reduce-overhead")
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.1, fused=True)
    model, optimizer = fabric.setup(model, optimizer)

    step = 0
    t0 = time.perf_counter()
    model.train()
    while step < args.max_steps:
        for input, target in train_loader:
            # flash kernels only: fail loudly rather than silently falling back to the math path
            with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
                logits = model(input)
                loss = F.cross_entropy(logits.view(-1, logits.size(-1)), target.view(-1))
            fabric.backward(loss)
            fabric.clip_gradients(model, optimizer, max_norm=1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1

            if step % 100 == 0:
                torch.cuda.synchronize()
                dt = (time.perf_counter() - t0) / 100
                fabric.print(f"step {step} | loss {loss.item():.3f} | {dt * 1000:.1f} ms/step")
                t0 = time.perf_counter()
            if step % 500 == 0:
                val_loss = validate(fabric, model, val_loader)
                fabric.print(f"step {step} | val loss {val_loss:.3f} | val ppl {math.exp(val_loss):.1f}")
                fabric.save(f"checkpoints/step-{step}.ckpt", {"model": model, "optimizer": optimizer, "step": step})
            if step >= args.max_steps:
                break

    if fabric.device.type == "cuda":
        fabric.print(f"Memory used: {torch.cuda.max_memory_allocated() / 1e9:.02f} GB")


if __name__ == "__main__":
    main(parse_args())
