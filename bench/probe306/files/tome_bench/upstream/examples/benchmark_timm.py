"""
Throughput / accuracy sweep for ToMe on off-the-shelf timm ViTs.

    python examples/benchmark_timm.py --model vit_base_patch16_224 --r 0 8 16 --fp16
    python examples/benchmark_timm.py --config configs/benchmark_sweep.json

Numbers in the paper were measured on a single V100 / A100 with batch size 256 and fp16.
"""
import argparse
import json
import os
import time

import torch
import torch.nn.functional as F
import timm
from timm.data import create_transform, resolve_data_config
from torchvision import datasets

import tome


def get_args():
    parser = argparse.ArgumentParser("ToMe timm benchmark")
    parser.add_argument("--config", type=str, default=None, help="optional JSON sweep file")
    parser.add_argument("--model", type=str, default="vit_base_patch16_224")
    parser.add_argument("--r", type=int, nargs="+", default=[0, 8, 16])
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--device", type=str, default="cuda:0")
    parser.add_argument("--data-path", type=str, default="", help="ImageNet val folder; empty = throughput only")
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--compile", action="store_true", help="torch.compile the patched model (torch>=2.0)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--out", type=str, default="results/tome_sweep.json")
    args = parser.parse_args()

    if args.config is not None:
        with open(args.config) as f:
            cfg = json.load(f)
        # must happen before the first CUDA call
        os.environ.update(cfg.pop("env", {}))
        for k, v in cfg.items():
            setattr(args, k.replace("-", "_"), v)
    return args


@torch.no_grad()
def evaluate(model, loader, use_fp16=False, max_batches=None):
    model.eval()
    correct, total = 0, 0
    for i, (images, target) in enumerate(loader):
        if max_batches is not None and i >= max_batches:
            break
        images = images.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        with torch.cuda.amp.autocast(enabled=use_fp16):
            output = model(images)
        correct += (output.argmax(dim=-1) == target).sum().item()
        total += target.numel()
    return 100.0 * correct / max(total, 1)


def build_val_loader(model, args):
    config = resolve_data_config({}, model=model)
    transform = create_transform(**config)
    dataset = datasets.ImageFolder(args.data_path, transform=transform)
    return torch.utils.data.DataLoader(
        dataset,
        batch_size=args.batch_size,
        shuffle=False,
        num_workers=args.workers,
        pin_memory=True,
    )


def profile_once(model, device, batch_size, use_fp16, trace_dir):
    from torch.profiler import ProfilerActivity, profile

    x = torch.rand(batch_size, 3, 224, 224, device=device)
    if use_fp16:
        x = x.half()
    os.makedirs(trace_dir, exist_ok=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
        with torch.no_grad():
            for _ in range(5):
                model(x)
    prof.export_chrome_trace(os.path.join(trace_dir, "tome_trace.json"))
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15))


def main():
    args = get_args()
    torch.backends.cudnn.benchmark = True

    device = args.device
    print(f"Benchmarking on {torch.cuda.get_device_name(0)} | torch {torch.__version__}")

    model = timm.create_model(args.model, pretrained=True)
    loader = build_val_loader(model, args) if args.data_path else None

    # Patch the model with ToMe.
    tome.patch.timm(model)
    if args.fp16:
        model = model.cuda().half()
    else:
        model = model.to(device)

    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    results = []
    for r in args.r:
        model.r = r
        throughput = tome.utils.benchmark(
            model,
            device=device,
            verbose=True,
            runs=args.runs,
            batch_size=args.batch_size,
            input_size=(3, 224, 224),
            use_fp16=args.fp16,
        )
        acc = evaluate(model, loader, use_fp16=args.fp16) if loader is not None else None
        mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3
        torch.cuda.reset_peak_memory_stats()
        print(f"r={r:3d}  throughput={throughput:8.1f} im/s  acc={acc}  peak_mem={mem_gb:.2f}GB")
        results.append({"r": r, "throughput": throughput, "acc": acc, "peak_mem_gb": mem_gb})

    if args.profile:
        model.r = args.r[-1]
        profile_once(model, device, args.batch_size, args.fp16, os.path.dirname(args.out) or ".")

    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(
            {
                "model": args.model,
                "batch_size": args.batch_size,
                "fp16": args.fp16,
                "gpu": torch.cuda.get_device_name(0),
                "time": time.strftime("%Y-%m-%d %H:%M:%S"),
                "results": results,
            },
            f,
            indent=2,
        )
    print(f"saved to {args.out}")


if __name__ == "__main__":
    main()
