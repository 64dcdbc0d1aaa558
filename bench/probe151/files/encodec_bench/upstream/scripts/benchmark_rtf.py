#!/usr/bin/env python
"""Measure encode/decode real-time factor of EnCodec on GPU.

Example:
    CUDA_VISIBLE_DEVICES=0 python scripts/benchmark_rtf.py --bandwidth 6 --seconds 10 --batch 8
"""
import argparse
import json
import platform

import torch

from encodec import EncodecModel


def gpu_name() -> str:
    if not torch.cuda.is_available():
        return "cpu"
    props = torch.cuda.get_device_properties(0)
    return f"{props.name} (sm_{props.major}{props.minor}, {props.total_memory / 2**30:.0f} GiB)"


def timed(fn, *args, repeat: int = 10):
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    # warm-up
    for _ in range(2):
        fn(*args)
    torch.cuda.synchronize()  # drain warm-up
    start.record()
    for _ in range(repeat):
        out = fn(*args)
    end.record()
    torch.cuda.synchronize()  # wait for the timed runs
    return out, start.elapsed_time(end) / repeat / 1000.0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", choices=["24khz", "48khz"], default="24khz")
    p.add_argument("--bandwidth", type=float, default=6.0)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--out", default=None, help="write results as json")
    args = p.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    model = (EncodecModel.encodec_model_24khz() if args.model == "24khz"
             else EncodecModel.encodec_model_48khz())
    model.set_target_bandwidth(args.bandwidth)
    model = model.cuda().eval()

    n = int(args.seconds * model.sample_rate)
    wav = torch.randn(args.batch, model.channels, n, device="cuda")

    torch.cuda.reset_peak_memory_stats()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16, enabled=args.fp16):
        frames, t_enc = timed(model.encode, wav)
        _, t_dec = timed(model.decode, frames)
    peak = torch.cuda.max_memory_allocated() / 2**20

    audio_s = args.seconds * args.batch
    res = {
        "device": gpu_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "host": platform.node(),
        "model": args.model,
        "bandwidth": args.bandwidth,
        "batch": args.batch,
        "encode_rtf": t_enc / audio_s,
        "decode_rtf": t_dec / audio_s,
        "peak_mem_mib": peak,
    }
    print(json.dumps(res, indent=2))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
