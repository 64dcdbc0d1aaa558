"""Throughput / latency benchmark for the arcface_torch backbones.

    python speed_test.py --network r100 --batch-size 256 --fp16
    python speed_test.py --network vit_b --batch-size 512 --compile

Prints images/s and peak memory per backbone; numbers in docs/speed_benchmark.md
were measured on a single A100-SXM4-80GB with this script.
"""
import argparse
import time

import numpy as np
import torch

from backbones import get_model


def parse_args():
    parser = argparse.ArgumentParser(description="arcface_torch backbone speed test")
    parser.add_argument("--network", type=str, default="r50", help="comma separated, e.g. r50,r100,vit_b")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--embedding-size", type=int, default=512)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--fp16", action="store_true", help="autocast to half (or bf16 on Ampere+)")
    parser.add_argument("--train", action="store_true", help="time forward+backward instead of inference")
    parser.add_argument("--compile", action="store_true", help="wrap the model with torch.compile")
    parser.add_argument("--channels-last", action="store_true")
    parser.add_argument("--gpu", type=int, default=0)
    return parser.parse_args()


def pick_amp_dtype():
    # bf16 is only worth it (and only exact) on sm_80 and newer
    major, minor = torch.cuda.get_device_capability()
    if major >= 8 and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad) / 1e6


def build(name, args):
    model = get_model(name, dropout=0.0, fp16=False, num_features=args.embedding_size)
    model = model.cuda()
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")
    if args.train:
        model.train()
    else:
        model.eval()
    return model


def run_once(model, images, args, amp_dtype):
    if args.train:
        with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.fp16):
            feats = model(images)
            loss = feats.float().pow(2).mean()
        loss.backward()
        model.zero_grad(set_to_none=True)
    else:
        with torch.no_grad(), torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.fp16):
            model(images)


def benchmark(name, args, amp_dtype):
    model = build(name, args)
    images = torch.randn(args.batch_size, 3, 112, 112, device="cuda")
    if args.channels_last:
        images = images.contiguous(memory_format=torch.channels_last)

    for _ in range(args.warmup):
        run_once(model, images, args, amp_dtype)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    latencies = []
    wall = time.time()
    for _ in range(args.iters):
        start_evt.record()
        run_once(model, images, args, amp_dtype)
        end_evt.record()
        end_evt.synchronize()
        latencies.append(start_evt.elapsed_time(end_evt))
    wall = time.time() - wall

    lat = np.array(latencies)
    result = {
        "network": name,
        "params(M)": count_parameters(model),
        "batch": args.batch_size,
        "img/s": args.batch_size * args.iters / wall,
        "p50(ms)": float(np.percentile(lat, 50)),
        "p90(ms)": float(np.percentile(lat, 90)),
        "peak_mem(GB)": torch.cuda.max_memory_allocated() / 1024 ** 3,
    }
    del model, images
    torch.cuda.empty_cache()
    return result


def main():
    args = parse_args()
    torch.cuda.set_device(args.gpu)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    amp_dtype = pick_amp_dtype() if args.fp16 else torch.float32
    print("device      :", torch.cuda.get_device_name(args.gpu))
    print("torch       :", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())
    print("amp dtype   :", amp_dtype)
    print("mode        :", "train" if args.train else "eval", "| compile" if args.compile else "")

    rows = []
    for name in args.network.split(","):
        r = benchmark(name.strip(), args, amp_dtype)
        rows.append(r)
        print("{network:>8s} | {params(M):7.2f}M | bs {batch:4d} | {img/s:9.1f} img/s | "
              "p50 {p50(ms):7.2f} ms | p90 {p90(ms):7.2f} ms | {peak_mem(GB):5.2f} GB".format(**r))

    if len(rows) > 1:
        best = max(rows, key=lambda r: r["img/s"])
        print("fastest:", best["network"])


if __name__ == "__main__":
    main()
