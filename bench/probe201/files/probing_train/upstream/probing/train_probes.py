"""Train one linear probe per layer on cached residual-stream activations.

Activations are produced by scripts/cache_activations.py and stored as
  {cache_dir}/layer_{L}.pt  -> float16 tensor [n_examples, d_model]
  {cache_dir}/labels.pt     -> int64 tensor [n_examples]

    python probing/train_probes.py --cache_dir acts/llama2-7b/truthfulqa --gpu 0
"""

import argparse
import json
import os
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--cache_dir", required=True)
    p.add_argument("--out_dir", default="probes")
    p.add_argument("--gpu", type=int, default=0, help="CUDA device index")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch_size", type=int, default=1024)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--wd", type=float, default=1e-2)
    p.add_argument("--fp16", action="store_true", help="mixed precision training")
    return p.parse_args()


class LinearProbe(nn.Module):
    def __init__(self, d_model: int, n_classes: int):
        super().__init__()
        self.linear = nn.Linear(d_model, n_classes)

    def forward(self, x):
        return self.linear(x)


def train_one_layer(layer, acts, labels, args, device):
    n_classes = int(labels.max().item()) + 1
    ds = TensorDataset(acts, labels)
    n_val = len(ds) // 5
    train_ds, val_ds = random_split(ds, [len(ds) - n_val, n_val], generator=torch.Generator().manual_seed(0))

    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=4, pin_memory=True)
    val_dl = DataLoader(val_ds, batch_size=args.batch_size, num_workers=4, pin_memory=True)

    probe = LinearProbe(acts.shape[1], n_classes).to(device)
    optimizer = torch.optim.AdamW(
        probe.parameters(), lr=args.lr, weight_decay=args.wd, fused=torch.cuda.is_available()
    )
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)
    loss_fn = nn.CrossEntropyLoss()

    for epoch in range(args.epochs):
        probe.train()
        for x, y in train_dl:
            x = x.to(device, non_blocking=True).float()
            y = y.to(device, non_blocking=True)
            with torch.cuda.amp.autocast(enabled=args.fp16):
                loss = loss_fn(probe(x), y)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()

    probe.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in val_dl:
            x = x.to(device, non_blocking=True).float()
            y = y.to(device, non_blocking=True)
            pred = probe(x).argmax(-1)
            correct += (pred == y).sum().item()
            total += y.numel()
    return probe, correct / max(total, 1)


def main():
    args = get_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    device = torch.device(f"cuda:{args.gpu}")

    labels = torch.load(os.path.join(args.cache_dir, "labels.pt"))
    layer_files = sorted(
        (f for f in os.listdir(args.cache_dir) if f.startswith("layer_")),
        key=lambda f: int(f.split("_")[1].split(".")[0]),
    )

    os.makedirs(args.out_dir, exist_ok=True)
    results = {}
    t0 = time.time()
    for f in layer_files:
        layer = int(f.split("_")[1].split(".")[0])
        # activations were saved from GPU tensors; map onto our device directly
        acts = torch.load(os.path.join(args.cache_dir, f), map_location=f"cuda:{args.gpu}").cpu()
        probe, acc = train_one_layer(layer, acts, labels, args, device)
        results[layer] = acc
        torch.save(probe.state_dict(), os.path.join(args.out_dir, f"probe_layer_{layer}.pt"))
        print(f"layer {layer:2d}: val acc {acc:.3f}  ({time.time() - t0:.0f}s)")

    best = max(results, key=results.get)
    print(f"best layer: {best} ({results[best]:.3f})")
    with open(os.path.join(args.out_dir, "results.json"), "w") as fh:
        json.dump({"accuracy": results, "best_layer": best}, fh, indent=2)


if __name__ == "__main__":
    main()
