#!/usr/bin/env python3
"""Measure real-time factor, latency percentiles and memory of SER front-ends.

Compares emotion2vec (fairseq), HuBERT/wav2vec2 (transformers) and the
SpeechBrain ECAPA/wav2vec2 classifier on synthetic audio of fixed lengths.

    python tools/benchmark_rtf.py --backend hf --model facebook/hubert-large-ll60k \
        --durations 2 5 10 20 --batch 1 8 --dtype fp16 --runs 50
"""
import argparse
import gc
import json
import platform
import statistics
import time
from contextlib import nullcontext

import numpy as np
import torch

try:
    import pynvml

    pynvml.nvmlInit()
    _NVML = True
except Exception:  # noqa: BLE001 - pynvml missing or no driver
    _NVML = False

SR = 16000


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", choices=["hf", "fairseq", "speechbrain"], default="hf")
    p.add_argument("--model", default="facebook/hubert-large-ll60k")
    p.add_argument("--checkpoint", default=None, help="fairseq checkpoint for --backend fairseq")
    p.add_argument("--durations", type=float, nargs="+", default=[2.0, 5.0, 10.0])
    p.add_argument("--batch", type=int, nargs="+", default=[1])
    p.add_argument("--dtype", choices=["fp32", "fp16", "bf16"], default="fp32")
    p.add_argument("--runs", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--compile", action="store_true", help="torch.compile the encoder (mode=max-autotune)")
    p.add_argument("--out", default=None)
    return p.parse_args()


def gpu_info():
    info = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "device": torch.cuda.get_device_name(0),
        "capability": ".".join(map(str, torch.cuda.get_device_capability(0))),
        "host": platform.node(),
    }
    if _NVML:
        h = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        info["driver"] = pynvml.nvmlSystemGetDriverVersion()
        info["power_limit_w"] = pynvml.nvmlDeviceGetPowerManagementLimit(h) / 1000
        info["sm_clock_mhz"] = pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)
    return info


def load_model(args, device):
    if args.backend == "hf":
        from transformers import AutoModel

        model = AutoModel.from_pretrained(args.model, attn_implementation="sdpa")
        fwd = lambda m, x: m(x).last_hidden_state  # noqa: E731
    elif args.backend == "fairseq":
        from fairseq import checkpoint_utils

        models, _, _ = checkpoint_utils.load_model_ensemble_and_task([args.checkpoint])
        model = models[0]
        fwd = lambda m, x: m.extract_features(x, padding_mask=None, mask=False)["x"]  # noqa: E731
    else:
        from speechbrain.inference.classifiers import EncoderClassifier

        clf = EncoderClassifier.from_hparams(source=args.model, run_opts={"device": str(device)})
        model = clf.mods
        fwd = lambda m, x: clf.encode_batch(x)  # noqa: E731
    model = model.eval().to(device)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")
    return model, fwd


def autocast_ctx(dtype):
    if dtype == "fp32":
        return nullcontext()
    return torch.autocast("cuda", dtype=torch.float16 if dtype == "fp16" else torch.bfloat16)


@torch.inference_mode()
def bench_one(model, fwd, device, dur, bsz, args):
    x = torch.randn(bsz, int(dur * SR), device=device)
    for _ in range(args.warmup):
        with autocast_ctx(args.dtype):
            fwd(model, x)
    torch.cuda.synchronize()  # drain warmup work
    torch.cuda.reset_peak_memory_stats()

    times = []
    for _ in range(args.runs):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        with autocast_ctx(args.dtype):
            fwd(model, x)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1000.0)

    audio = dur * bsz
    return {
        "duration_s": dur,
        "batch": bsz,
        "mean_ms": 1000 * statistics.mean(times),
        "p50_ms": 1000 * float(np.percentile(times, 50)),
        "p90_ms": 1000 * float(np.percentile(times, 90)),
        "p99_ms": 1000 * float(np.percentile(times, 99)),
        "rtf": statistics.mean(times) / audio,
        "peak_mem_mib": torch.cuda.max_memory_allocated() / 2**20,
    }


def main():
    args = parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("this benchmark needs a CUDA GPU")
    device = torch.device("cuda", 0)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    info = gpu_info()
    print(json.dumps(info, indent=1))
    if args.dtype == "bf16" and not torch.cuda.is_bf16_supported():
        raise SystemExit("bf16 requested but this GPU has no bf16 support")

    model, fwd = load_model(args, device)
    results = []
    for bsz in args.batch:
        for dur in args.durations:
            try:
                r = bench_one(model, fwd, device, dur, bsz, args)
            except torch.cuda.OutOfMemoryError:
                print(f"OOM at batch={bsz} dur={dur}s, skipping")
                gc.collect()
                torch.cuda.empty_cache()
                continue
            results.append(r)
            print(f"b={bsz:<3d} {dur:5.1f}s  mean {r['mean_ms']:8.2f} ms  p90 {r['p90_ms']:8.2f} ms  "
                  f"RTF {r['rtf']:.4f}  peak {r['peak_mem_mib']:.0f} MiB")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"env": info, "args": vars(args), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
