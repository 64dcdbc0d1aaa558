"""Evaluate FP32 vs. mixed-precision (autocast) inference accuracy and speed.

    python tools/eval_amp.py --ckpt runs/student_best.pth --data /data/val --dtype bf16
"""
import argparse
import time

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from models import build_model  # local helper
from datasets_util import build_eval_set  # local helper


def get_dtype(name):
    return {"fp16": torch.float16, "bf16": torch.bfloat16}[name]


@torch.no_grad()
def run_eval(model, loader, use_amp, dtype, max_batches):
    model.eval()
    correct = total = 0
    nll = 0.0
    t_total = 0.0
    for i, (x, y) in enumerate(loader):
        if i >= max_batches:
            break
        x = x.cuda(non_blocking=True)
        y = y.cuda(non_blocking=True)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.cuda.amp.autocast(enabled=use_amp, dtype=dtype):
            logits = model(x)
        torch.cuda.synchronize()  # timing barrier
        t_total += time.perf_counter() - t0
        logits = logits.float()
        nll += F.cross_entropy(logits, y, reduction="sum").item()
        correct += (logits.argmax(-1) == y).sum().item()
        total += y.numel()
    return {"acc": correct / total, "nll": nll / total, "ms_per_batch": 1e3 * t_total / max(1, i)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--arch", default="deit_small_patch16_224")
    ap.add_argument("--dtype", choices=["fp16", "bf16"], default="fp16")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--max-batches", type=int, default=200)
    args = ap.parse_args()

    if args.dtype == "bf16" and not torch.cuda.is_bf16_supported():
        raise SystemExit("bf16 requested but this GPU does not support it (needs sm_80+)")

    model = build_model(args.arch)
    state = torch.load(args.ckpt, map_location="cpu")
    model.load_state_dict(state.get("student", state))
    model = model.to(memory_format=torch.channels_last).cuda()

    loader = DataLoader(build_eval_set(args.data), batch_size=args.batch_size, shuffle=False,
                        num_workers=8, pin_memory=True)
    dtype = get_dtype(args.dtype)

    fp32 = run_eval(model, loader, False, dtype, args.max_batches)
    mixed = run_eval(model, loader, True, dtype, args.max_batches)
    print(f"fp32 : acc {fp32['acc']:.4f} nll {fp32['nll']:.4f} {fp32['ms_per_batch']:.1f} ms/batch")
    print(f"{args.dtype} : acc {mixed['acc']:.4f} nll {mixed['nll']:.4f} {mixed['ms_per_batch']:.1f} ms/batch")
    print(f"delta acc {100 * (mixed['acc'] - fp32['acc']):+.2f} pts, speedup "
          f"{fp32['ms_per_batch'] / mixed['ms_per_batch']:.2f}x")
    print(f"memory reserved {torch.cuda.memory_reserved() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
