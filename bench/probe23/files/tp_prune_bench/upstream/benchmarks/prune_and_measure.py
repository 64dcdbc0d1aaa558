"""Structured pruning with Torch-Pruning and on-device latency measurement.

Prunes a ResNet-50 with group-level L2 magnitude importance until the MACs
target is met, then reports params / MACs / latency before and after.
Latency is measured with CUDA events after a warm-up phase.
"""
import argparse
import json
import statistics

import torch
import torch.nn as nn
import torch_pruning as tp
import torchvision


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="resnet50")
    ap.add_argument("--target-macs-ratio", type=float, default=0.5)
    ap.add_argument("--iterative-steps", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--fp16", action="store_true")
    ap.add_argument("--report", default="prune_report.json")
    return ap.parse_args()


@torch.no_grad()
def measure_latency(model, example, warmup=20, iters=100):
    """Return (mean, p50, p90) latency in milliseconds."""
    model.eval()
    for _ in range(warmup):
        model(example)
    torch.cuda.synchronize()

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = []
    for _ in range(iters):
        starter.record()
        model(example)
        ender.record()
        torch.cuda.synchronize()  # wait for ender
        timings.append(starter.elapsed_time(ender))
    timings.sort()
    return (statistics.mean(timings), timings[len(timings) // 2], timings[int(len(timings) * 0.9)])


def build_pruner(model, example, args):
    imp = tp.importance.GroupNormImportance(p=2)
    ignored = [m for m in model.modules() if isinstance(m, nn.Linear) and m.out_features == 1000]
    return tp.pruner.MetaPruner(
        model,
        example,
        importance=imp,
        iterative_steps=args.iterative_steps,
        pruning_ratio=1.0,  # upper bound, we stop on the MACs target
        ignored_layers=ignored,
        global_pruning=False,
    )


def main():
    args = parse()
    torch.backends.cudnn.benchmark = True
    model = getattr(torchvision.models, args.arch)(weights="DEFAULT").cuda().eval()
    example = torch.randn(1, 3, 224, 224).cuda()

    base_macs, base_params = tp.utils.count_ops_and_params(model, example)
    bench_in = torch.randn(args.batch_size, 3, 224, 224, device="cuda")
    if args.fp16:
        model, bench_in = model.half(), bench_in.half()
    base_lat = measure_latency(model, bench_in, args.warmup, args.iters)
    model.float()

    pruner = build_pruner(model, example, args)
    macs = base_macs
    for step in range(args.iterative_steps):
        pruner.step()
        macs, params = tp.utils.count_ops_and_params(model, example)
        print(f"step {step}: MACs {macs / 1e9:.2f}G params {params / 1e6:.2f}M")
        if macs <= base_macs * args.target_macs_ratio:
            break

    if args.fp16:
        model, bench_in = model.half(), bench_in.half()
    pruned_lat = measure_latency(model, bench_in, args.warmup, args.iters)

    report = {
        "device": torch.cuda.get_device_name(0),
        "arch": args.arch,
        "base": {"macs_g": base_macs / 1e9, "params_m": base_params / 1e6, "latency_ms": base_lat},
        "pruned": {"macs_g": macs / 1e9, "params_m": params / 1e6, "latency_ms": pruned_lat},
        "speedup": base_lat[0] / pruned_lat[0],
    }
    print(json.dumps(report, indent=2))
    with open(args.report, "w") as f:
        json.dump(report, f, indent=2)
    torch.save(model, f"{args.arch}_pruned.pth")  # full module: pruned shapes are not in the arch


if __name__ == "__main__":
    main()
