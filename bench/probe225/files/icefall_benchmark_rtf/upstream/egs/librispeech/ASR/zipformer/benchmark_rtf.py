#!/usr/bin/env python3
# Copyright    2023  Xiaomi Corp.        (authors: Zengwei Yao)
#
# See ../../../../LICENSE for clarification regarding multiple authors
"""
Measure the real-time factor (RTF) and peak memory of the zipformer encoder
on a GPU, optionally with a torch.profiler trace.

Usage:
  ./zipformer/benchmark_rtf.py \
    --exp-dir zipformer/exp \
    --epoch 30 --avg 9 \
    --batch-size 16 --num-frames 1000 \
    --use-fp16 1 --profile 1
"""

import argparse
import logging
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile, record_function
from train import add_model_arguments, get_model, get_params

from icefall.checkpoint import load_checkpoint
from icefall.utils import str2bool


def get_parser():
    parser = argparse.ArgumentParser(
        formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument("--exp-dir", type=Path, default=Path("zipformer/exp"))
    parser.add_argument("--epoch", type=int, default=30)
    parser.add_argument("--avg", type=int, default=9)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--num-frames", type=int, default=1000)
    parser.add_argument("--num-iters", type=int, default=20)
    parser.add_argument("--warmup-iters", type=int, default=5)
    parser.add_argument("--use-fp16", type=str2bool, default=True)
    parser.add_argument("--profile", type=str2bool, default=False)
    parser.add_argument("--gpu", type=int, default=0, help="Which GPU to use")
    add_model_arguments(parser)
    return parser


@torch.no_grad()
def main():
    args = get_parser().parse_args()
    params = get_params()
    params.update(vars(args))
    params.blank_id = 0
    params.vocab_size = 500

    if not torch.cuda.is_available():
        raise RuntimeError("This benchmark needs a CUDA device")

    torch.cuda.set_device(params.gpu)
    device = torch.device(f"cuda:{params.gpu}")
    props = torch.cuda.get_device_properties(device)
    logging.info(
        f"GPU: {props.name}, {props.total_memory / 2**30:.1f} GiB, "
        f"SM {props.major}.{props.minor}, {props.multi_processor_count} SMs"
    )

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    model = get_model(params)
    load_checkpoint(f"{params.exp_dir}/epoch-{params.epoch}.pt", model)
    model.to(device)
    model.eval()

    N, T = params.batch_size, params.num_frames
    x = torch.randn(N, T, 80, device=device)
    x_lens = torch.full((N,), T, dtype=torch.int64, device=device)
    # 10 ms frame shift
    audio_seconds = N * T * 0.01

    def run_once():
        with torch.cuda.amp.autocast(enabled=params.use_fp16):
            encoder_out, encoder_out_lens = model.forward_encoder(x, x_lens)
        return encoder_out

    for _ in range(params.warmup_iters):
        run_once()
    torch.cuda.synchronize()

    torch.cuda.reset_peak_memory_stats(device)
    start_event = torch.cuda.Event(enable_timing=True)
    end_event = torch.cuda.Event(enable_timing=True)

    start_event.record()
    wall_start = time.time()
    for _ in range(params.num_iters):
        run_once()
    end_event.record()
    torch.cuda.synchronize(device)
    wall = time.time() - wall_start

    elapsed = start_event.elapsed_time(end_event) / 1000.0 / params.num_iters
    rtf = elapsed / audio_seconds
    peak_mem = torch.cuda.max_memory_allocated(device) / 2**20

    logging.info(
        f"batch={N}, frames={T}, fp16={params.use_fp16}: "
        f"{elapsed * 1000:.1f} ms/iter (wall {wall / params.num_iters * 1000:.1f} ms), "
        f"RTF={rtf:.5f}, peak memory={peak_mem:.0f} MiB"
    )

    if params.profile:
        trace_file = params.exp_dir / f"trace-bs{N}-T{T}.json"
        with profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            record_shapes=True,
            profile_memory=True,
        ) as prof:
            with record_function("zipformer_encoder"):
                run_once()
                torch.cuda.current_stream().synchronize()
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25))
        prof.export_chrome_trace(str(trace_file))
        logging.info(f"Chrome trace written to {trace_file}")


if __name__ == "__main__":
    formatter = "%(asctime)s %(levelname)s [%(filename)s:%(lineno)d] %(message)s"
    logging.basicConfig(format=formatter, level=logging.INFO)
    main()
