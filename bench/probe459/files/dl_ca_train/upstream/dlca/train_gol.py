"""Learn Conway's Game of Life (or another life-like rule) with a differentiable
logic CA. After training, the discretised circuit should reproduce the rule
exactly on all 512 neighbourhood configurations.

    python -m dlca.train_gol --rule gol --steps 3000
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

from dlca.gol import RULES, random_grids, all_3x3_patterns, glider, rollout
from dlca.model import DiffLogicCA

parser = argparse.ArgumentParser()
parser.add_argument("--rule", type=str, default="gol", choices=sorted(RULES))
parser.add_argument("--grid", type=int, default=32)
parser.add_argument("--batch-size", type=int, default=20)
parser.add_argument("--steps", type=int, default=3000)
parser.add_argument("--rollout", type=int, default=1, help="CA steps unrolled per training sample")
parser.add_argument("--lr", type=float, default=0.05)
parser.add_argument("--n-kernels", type=int, default=16)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--device", type=str, default="cuda")
parser.add_argument("--implementation", type=str, default="cuda", choices=["cuda", "python"])
parser.add_argument("--out", type=str, default="runs/dlca")
parser.add_argument("--eval-every", type=int, default=250)
args = parser.parse_args()

if args.device.startswith("cuda"):
    assert torch.cuda.is_available(), "CUDA requested but not available; use --device cpu --implementation python"

torch.manual_seed(args.seed)
np.random.seed(args.seed)
gen = torch.Generator(device=args.device).manual_seed(args.seed)

rule = RULES[args.rule]
model = DiffLogicCA(n_kernels=args.n_kernels, device=args.device, implementation=args.implementation)
optim = torch.optim.Adam(model.parameters(), lr=args.lr)
os.makedirs(args.out, exist_ok=True)


@torch.no_grad()
def exhaustive_accuracy():
    """Accuracy of the hard (discretised) circuit on all 512 3x3 patterns."""
    model.eval()
    pats = all_3x3_patterns(device=args.device)
    target = rule(pats)[:, :, 1, 1]
    pred = model(pats)[:, :, 1, 1]
    acc = ((pred > 0.5).float() == target).float().mean().item()
    model.train()
    return acc


@torch.no_grad()
def glider_test(n=40):
    model.eval()
    g = glider(device=args.device)
    ref = rollout(rule, g, n)
    out = rollout(lambda z: (model(z) > 0.5).float(), g, n)
    model.train()
    return bool((ref == out).all().item())


log = []
t0 = time.time()
for it in range(args.steps + 1):
    x = random_grids(args.batch_size, args.grid, args.grid, device=args.device, generator=gen)
    target = x
    for _ in range(args.rollout):
        target = rule(target)
    pred = model(x, steps=args.rollout)
    loss = F.mse_loss(pred, target, reduction="sum")

    optim.zero_grad()
    loss.backward()
    optim.step()

    if it % args.eval_every == 0:
        torch.cuda.synchronize()
        acc = exhaustive_accuracy()
        ok = glider_test()
        elapsed = time.time() - t0
        log.append({"it": it, "loss": loss.item(), "acc512": acc, "glider": ok, "time": elapsed})
        print("it %5d  loss %10.3f  acc(512) %.4f  glider %s  %.1fs" % (it, loss.item(), acc, ok, elapsed))
        if acc == 1.0 and ok:
            print("rule learned exactly, stopping early")
            break

torch.save(model.state_dict(), os.path.join(args.out, "dlca_%s.pt" % args.rule))
with open(os.path.join(args.out, "log_%s.json" % args.rule), "w") as f:
    json.dump({"args": vars(args), "log": log, "gates": model.gate_histogram().tolist()}, f, indent=2)


def export_truth_table(path):
    """Dump the discretised perception + update circuits as a 512-row truth table
    (neighbourhood bits -> next state), to compare with the reference rule."""
    model.eval()
    with torch.no_grad():
        pats = all_3x3_patterns(device=args.device)
        nxt = (model(pats)[:, 0, 1, 1] > 0.5).long().cpu().numpy()
        ref = rule(pats)[:, 0, 1, 1].long().cpu().numpy()
    rows = []
    for i in range(512):
        bits = "".join(str((i >> k) & 1) for k in range(9))
        rows.append("%s %d %d" % (bits, nxt[i], ref[i]))
    with open(path, "w") as f:
        f.write("# neighbourhood(9 bits, row-major) predicted reference\n")
        f.write("\n".join(rows) + "\n")
    mismatches = int((nxt != ref).sum())
    print("truth table written to %s (%d mismatches)" % (path, mismatches))
    return mismatches


export_truth_table(os.path.join(args.out, "truth_table_%s.txt" % args.rule))
