"""Latency / throughput benchmark for online knowledge-tracing inference.

For the adaptive-practice service we need the next-question correctness probability for a
student within a few milliseconds. This script loads a trained pyKT checkpoint, builds random
histories of the requested length and reports p50/p99 latency per batch size, with and without
fp16 autocast and CUDA graphs.

    python tools/benchmark_inference.py --save_dir saved_model/akt_assist2009_... --batch_sizes 1,8,64,512
"""
import argparse
import json
import os
import statistics
import time

import numpy as np
import torch

from pykt.models import load_model


def build_inputs(num_q, num_c, batch_size, seq_len, device):
    q = torch.randint(1, num_q, (batch_size, seq_len), device=device)
    c = torch.randint(1, num_c, (batch_size, seq_len), device=device)
    r = torch.randint(0, 2, (batch_size, seq_len), device=device)
    return q, c, r


def forward(model, model_name, q, c, r):
    if model_name in ["akt", "simplekt", "folibikt"]:
        return model(c, r, q)[0]
    if model_name in ["sakt", "kqn"]:
        return model(c[:, :-1], r[:, :-1], c[:, 1:])
    if model_name in ["dkvmn", "deep_irt"]:
        return model(c, r)
    return model(c, r)


def time_cuda(fn, iters, warmup=20):
    """Time `fn` with CUDA events; returns per-call latencies in ms."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return times


def capture_graph(model, model_name, static_inputs):
    """Capture one forward pass into a CUDA graph (inference only; static shapes)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            forward(model, model_name, *static_inputs)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = forward(model, model_name, *static_inputs)
    return g, static_out


def summarize(times):
    times = sorted(times)
    return {
        "p50_ms": round(statistics.median(times), 3),
        "p99_ms": round(times[int(0.99 * (len(times) - 1))], 3),
        "mean_ms": round(sum(times) / len(times), 3),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--save_dir", type=str, required=True)
    parser.add_argument("--batch_sizes", type=str, default="1,8,64,512")
    parser.add_argument("--seq_len", type=int, default=200)
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--cuda_graph", action="store_true")
    parser.add_argument("--out", type=str, default="bench_results.json")
    args = parser.parse_args()

    assert torch.cuda.is_available(), "benchmark must run on a GPU"
    device = torch.device("cuda:0")
    torch.backends.cudnn.benchmark = True
    props = torch.cuda.get_device_properties(device)
    print(f"GPU: {props.name}, {props.total_memory / 2**30:.1f} GiB, SMs={props.multi_processor_count}, "
          f"capability={props.major}.{props.minor}")

    with open(os.path.join(args.save_dir, "config.json")) as f:
        config = json.load(f)
    model_config = {k: v for k, v in config["model_config"].items()
                    if k not in ["use_wandb", "learning_rate", "add_uuid", "l2"]}
    params = config["params"]
    model_name, emb_type = params["model_name"], params["emb_type"]
    data_config = config["data_config"]
    model = load_model(model_name, model_config, data_config, emb_type, args.save_dir)
    model.eval()

    results = {"device": props.name, "model": model_name, "seq_len": args.seq_len, "runs": []}
    for bs in [int(b) for b in args.batch_sizes.split(",")]:
        q, c, r = build_inputs(data_config["num_q"] or data_config["num_c"], data_config["num_c"], bs, args.seq_len, device)
        torch.cuda.reset_peak_memory_stats(device)
        with torch.no_grad(), torch.cuda.amp.autocast(enabled=args.fp16):
            if args.cuda_graph:
                g, _ = capture_graph(model, model_name, (q, c, r))
                times = time_cuda(g.replay, args.iters)
            else:
                torch.cuda.nvtx.range_push(f"bs{bs}")
                times = time_cuda(lambda: forward(model, model_name, q, c, r), args.iters)
                torch.cuda.nvtx.range_pop()
        peak = torch.cuda.max_memory_allocated(device) / 2**20
        row = {"batch_size": bs, "peak_mem_mb": round(peak, 1), **summarize(times)}
        row["throughput_seq_per_s"] = round(bs / (row["mean_ms"] / 1000.0), 1)
        print(row)
        results["runs"].append(row)
        torch.cuda.empty_cache()

    # host-side end-to-end latency incl. H2D copy, as seen by the service
    q_cpu, c_cpu, r_cpu = build_inputs(data_config["num_c"], data_config["num_c"], 1, args.seq_len, "cpu")
    e2e = []
    with torch.no_grad():
        for _ in range(args.iters):
            t0 = time.perf_counter()
            out = forward(model, model_name, q_cpu.to(device, non_blocking=True),
                          c_cpu.to(device, non_blocking=True), r_cpu.to(device, non_blocking=True))
            out.float().cpu()
            e2e.append((time.perf_counter() - t0) * 1000)
    results["e2e_bs1"] = summarize(e2e)
    print("end-to-end bs=1:", results["e2e_bs1"])

    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
