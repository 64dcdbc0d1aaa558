#!/usr/bin/env python
r"""Fits a normalizing flow to the two-moons distribution with zuko.

Examples:
    python train_moons.py --flow nsf
    python train_moons.py --flow cnf --steps 2048 --bench
"""

import argparse
import math
import time

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import zuko

from sklearn.datasets import make_moons


def get_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--flow", choices=["nsf", "maf", "nice", "naf", "cnf"], default="nsf")
    p.add_argument("--transforms", type=int, default=3)
    p.add_argument("--hidden", type=int, nargs="+", default=[64, 64])
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--steps", type=int, default=4096)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--deterministic", action="store_true", help="bit-exact reruns (slower)")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--bench", action="store_true", help="time fwd+bwd with CUDA events")
    p.add_argument("--out", default="moons.png")
    return p.parse_args()


def build_flow(args) -> zuko.flows.LazyDistribution:
    kwargs = dict(hidden_features=args.hidden)
    if args.flow == "nsf":
        return zuko.flows.NSF(2, 0, transforms=args.transforms, bins=8, **kwargs)
    if args.flow == "maf":
        return zuko.flows.MAF(2, 0, transforms=args.transforms, **kwargs)
    if args.flow == "nice":
        return zuko.flows.NICE(2, 0, transforms=args.transforms, **kwargs)
    if args.flow == "naf":
        return zuko.flows.NAF(2, 0, transforms=args.transforms, signal=16, network={"hidden_features": args.hidden})
    # continuous normalizing flow; exact divergence is fine in 2-D
    return zuko.flows.CNF(2, 0, exact=True, **kwargs)


def sample_moons(n: int, device) -> torch.Tensor:
    x, _ = make_moons(n, noise=0.05)
    x = (x - np.array([0.5, 0.25])) / np.array([0.87, 0.5])
    return torch.from_numpy(x).float().to(device)


def nll(flow, x: torch.Tensor) -> torch.Tensor:
    return -flow().log_prob(x).mean()


def bench(flow, x: torch.Tensor, iters: int = 50) -> float:
    """Average milliseconds for one forward+backward pass."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)

    for _ in range(5):
        nll(flow, x).backward()
    torch.cuda.synchronize()  # drain warm-up work

    start.record()
    for _ in range(iters):
        nll(flow, x).backward()
    end.record()
    torch.cuda.synchronize()

    return start.elapsed_time(end) / iters


@torch.no_grad()
def plot(flow, path: str, n: int = 16384):
    samples = flow().sample((n,)).cpu().numpy()
    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    axes[0].hist2d(*samples.T, bins=128, range=[[-3, 3], [-3, 3]])
    axes[0].set_title("samples")

    grid = torch.linspace(-3, 3, 200)
    xx, yy = torch.meshgrid(grid, grid, indexing="xy")
    pts = torch.stack([xx.flatten(), yy.flatten()], dim=-1).to(next(flow.parameters()).device)
    logp = flow().log_prob(pts).reshape(200, 200).cpu()
    axes[1].imshow(logp.exp().numpy(), origin="lower", extent=[-3, 3, -3, 3])
    axes[1].set_title("density")

    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def main():
    args = get_args()

    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    np.random.seed(args.seed)
    if args.deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False

    device = torch.device(args.device)
    flow = build_flow(args).to(device)
    n_params = sum(p.numel() for p in flow.parameters())
    print(f"{args.flow}: {n_params / 1e3:.1f}k parameters on {device}")

    optimizer = torch.optim.Adam(flow.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)

    t0 = time.perf_counter()
    running = None
    for step in range(1, args.steps + 1):
        x = sample_moons(args.batch_size, device)
        loss = nll(flow, x)

        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(flow.parameters(), 1.0)
        optimizer.step()
        scheduler.step()

        value = loss.item()
        running = value if running is None else 0.98 * running + 0.02 * value
        if not math.isfinite(value):
            raise RuntimeError(f"non-finite loss at step {step}")

        if step % 256 == 0:
            elapsed = time.perf_counter() - t0
            print(f"step {step:5d} | nll {running:.4f} | {step / elapsed:.1f} it/s")

    if args.bench:
        ms = bench(flow, sample_moons(args.batch_size, device))
        print(f"fwd+bwd: {ms:.2f} ms/iter on {torch.cuda.get_device_name(device)}")

    flow.eval()
    plot(flow, args.out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
