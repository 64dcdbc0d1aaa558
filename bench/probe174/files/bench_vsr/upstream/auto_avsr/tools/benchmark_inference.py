"""Benchmark lip-reading / AVSR inference latency and real-time factor on a single GPU.

    python tools/benchmark_inference.py --modality video --model-path model_avg_10.pth \
        --num-frames 75 150 300 --beam-size 10 40 --fp16 --out bench.json

Encoder and beam search are timed separately with CUDA events; NVTX ranges make the two
phases easy to find in an Nsight Systems timeline (nsys profile -t cuda,nvtx ...).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from lightning import ModelModule, get_beam_search_decoder  # noqa: E402

try:
    import pynvml

    pynvml.nvmlInit()
    _NVML = True
except Exception:  # no driver / no pynvml: skip power and clock info
    _NVML = False


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--modality", default="video", choices=["audio", "video"])
    p.add_argument("--model-path", required=True)
    p.add_argument("--num-frames", type=int, nargs="+", default=[75, 150, 300])
    p.add_argument("--beam-size", type=int, nargs="+", default=[40])
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--fp16", action="store_true")
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--device-index", type=int, default=0)
    p.add_argument("--out", default=None)
    return p.parse_args()


def device_info(index):
    props = torch.cuda.get_device_properties(index)
    info = {
        "name": torch.cuda.get_device_name(index),
        "total_mem_gb": round(props.total_memory / 2 ** 30, 2),
        "capability": f"{props.major}.{props.minor}",
        "sm_count": props.multi_processor_count,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
    }
    if _NVML:
        h = pynvml.nvmlDeviceGetHandleByIndex(index)
        info["driver"] = pynvml.nvmlSystemGetDriverVersion()
        info["power_limit_w"] = pynvml.nvmlDeviceGetPowerManagementLimit(h) / 1000
    return info


def log_clocks(index):
    out = subprocess.check_output(
        ["nvidia-smi", "-i", str(index), "--query-gpu=clocks.sm,clocks.mem,temperature.gpu", "--format=csv,noheader"]
    )
    return out.decode().strip()


def dummy_input(modality, num_frames, device, dtype):
    if modality == "video":
        return torch.randn(num_frames, 1, 88, 88, device=device, dtype=dtype)
    return torch.randn(num_frames * 640, 1, device=device, dtype=dtype)


def load_model(args, device):
    ns = argparse.Namespace(modality=args.modality, ctc_weight=0.1, pretrained_model_path=None)
    module = ModelModule(ns)
    state = torch.load(args.model_path, map_location="cpu")
    module.model.load_state_dict(state)
    module.model.eval().cuda()
    return module


@torch.inference_mode()
def run_once(module, x, beam_search, amp_dtype):
    start_enc = torch.cuda.Event(enable_timing=True)
    end_enc = torch.cuda.Event(enable_timing=True)
    end_dec = torch.cuda.Event(enable_timing=True)

    start_enc.record()
    torch.cuda.nvtx.range_push("encoder")
    with torch.cuda.amp.autocast(enabled=amp_dtype is not None, dtype=amp_dtype or torch.float16):
        enc_feat, _ = module.model.encoder(x.unsqueeze(0), None)
    torch.cuda.nvtx.range_pop()
    end_enc.record()

    torch.cuda.nvtx.range_push("beam_search")
    nbest = beam_search(enc_feat.squeeze(0).float())
    torch.cuda.nvtx.range_pop()  # beam_search
    end_dec.record()

    torch.cuda.synchronize()
    return start_enc.elapsed_time(end_enc), end_enc.elapsed_time(end_dec), nbest


def main():
    args = parse_args()
    if not torch.cuda.is_available():
        sys.exit("CUDA GPU required for benchmarking")
    torch.cuda.set_device(args.device_index)
    device = torch.device("cuda", args.device_index)
    torch.backends.cudnn.benchmark = True

    if args.bf16 and torch.cuda.get_device_capability(args.device_index)[0] < 8:
        sys.exit("--bf16 needs an Ampere or newer GPU")
    amp_dtype = torch.bfloat16 if args.bf16 else (torch.float16 if args.fp16 else None)

    module = load_model(args, device)
    results = {"device": device_info(args.device_index), "runs": []}
    print(json.dumps(results["device"], indent=2))

    for beam in args.beam_size:
        beam_search = get_beam_search_decoder(module.model, module.token_list, beam_size=beam)
        beam_search.to(device).eval()
        for n in args.num_frames:
            x = dummy_input(args.modality, n, device, torch.float32)
            for _ in range(args.warmup):
                run_once(module, x, beam_search, amp_dtype)
            torch.cuda.reset_peak_memory_stats(device)
            enc_ms, dec_ms = [], []
            for _ in range(args.repeats):
                e, d, _ = run_once(module, x, beam_search, amp_dtype)
                enc_ms.append(e)
                dec_ms.append(d)
            audio_sec = n / 25.0
            total = statistics.median(enc_ms) + statistics.median(dec_ms)
            run = {
                "beam": beam,
                "frames": n,
                "encoder_ms": round(statistics.median(enc_ms), 2),
                "decoder_ms": round(statistics.median(dec_ms), 2),
                "rtf": round(total / 1000.0 / audio_sec, 4),
                "peak_mem_mb": round(torch.cuda.max_memory_allocated(device) / 2 ** 20, 1),
                "clocks": log_clocks(args.device_index),
            }
            results["runs"].append(run)
            print(run)

    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
