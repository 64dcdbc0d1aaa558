#!/usr/bin/python3
"""
Export a trained checkpoint as a TorchScript module for the libtorch backend of the
C++ search engine (cpp/neuralnet/torchbackend.cpp), plus a small latency benchmark.

The engine calls torch::jit::load(path) and then module.to(device, dtype), so the
exported graph must not hardcode a device. We still trace on the GPU because some
custom ops (the fused global pooling) only produce identical graphs there, and we
compare the traced output against eager mode before writing the file.
"""
import argparse
import json
import logging
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn

import modelconfigs
import load_model
from model_pytorch import Model

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")


class ExportWrapper(torch.nn.Module):
    """Flattens the tuple-of-heads output of Model into the fixed layout the engine expects."""

    def __init__(self, model: Model):
        super().__init__()
        self.model = model

    def forward(self, input_spatial: torch.Tensor, input_global: torch.Tensor):
        outputs = self.model(input_spatial, input_global)
        # main head only; the engine ignores intermediate/auxiliary heads
        (policy_logits, value_logits, td_value_logits, pred_td_score, ownership_pretanh, pred_scoring,
         futurepos_pretanh, seki_logits, pred_scoremean, pred_scorestdev, pred_lead, pred_variance_time,
         pred_shortterm_value_error, pred_shortterm_score_error, scorebelief_logits) = outputs[0]
        return (
            policy_logits,
            value_logits,
            torch.cat([pred_scoremean, pred_scorestdev, pred_lead, pred_variance_time], dim=1),
            ownership_pretanh,
        )


def choose_dtype(device, requested):
    if requested == "fp32":
        return torch.float32
    if requested == "fp16":
        return torch.float16
    # auto: half precision only pays off with tensor cores (Volta or newer)
    props = torch.cuda.get_device_properties(device)
    if props.major >= 7:
        return torch.float16
    return torch.float32


def make_dummy_inputs(model_config, batch_size, pos_len, device, dtype):
    num_bin = modelconfigs.get_num_bin_input_features(model_config)
    num_global = modelconfigs.get_num_global_input_features(model_config)
    spatial = torch.zeros(batch_size, num_bin, pos_len, pos_len, device=device, dtype=dtype)
    spatial[:, 0, :, :] = 1.0  # on-board mask
    global_in = torch.zeros(batch_size, num_global, device=device, dtype=dtype)
    return spatial, global_in


def benchmark(module, inputs, iters):
    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    with torch.no_grad():
        for _ in range(10):
            module(*inputs)
        torch.cuda.synchronize()
        timings = []
        for _ in range(iters):
            starter.record()
            module(*inputs)
            ender.record()
            torch.cuda.current_stream().synchronize()
            timings.append(starter.elapsed_time(ender))
    timings = np.array(timings)
    return float(np.mean(timings)), float(np.percentile(timings, 95))


def max_abs_diff(a, b):
    return max(float((x.float() - y.float()).abs().max().item()) for x, y in zip(a, b))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('-checkpoint', help='Checkpoint to export', required=True)
    parser.add_argument('-export-dir', help='Dir to write the .pt file and metadata to', required=True)
    parser.add_argument('-model-name', help='Name recorded in the metadata file', required=True)
    parser.add_argument('-pos-len', help='Board size the engine will be run at', type=int, default=19)
    parser.add_argument('-batch-size', help='Example batch size used for tracing', type=int, default=16)
    parser.add_argument('-use-swa', help='Export the SWA weights instead of the raw weights', action='store_true')
    parser.add_argument('-dtype', help='fp32, fp16 or auto', default='auto', choices=['fp32', 'fp16', 'auto'])
    parser.add_argument('-gpu', help='GPU index to trace on', type=int, default=0)
    parser.add_argument('-bench-iters', help='Iterations of the latency benchmark, 0 to skip', type=int, default=100)
    parser.add_argument('-tolerance', help='Max allowed abs diff between eager and traced', type=float, default=2e-2)
    args = parser.parse_args()

    os.makedirs(args.export_dir, exist_ok=True)

    # cudnn autotuning makes the benchmark numbers representative of the engine
    torch.backends.cudnn.benchmark = True

    device = torch.device(f"cuda:{args.gpu}")
    torch.cuda.set_device(device)
    logging.info(f"Tracing on {torch.cuda.get_device_name(device)}")

    model, swa_model, other_state_dict = load_model.load_model(
        args.checkpoint, use_swa=args.use_swa, device=device, pos_len=args.pos_len, verbose=True
    )
    if swa_model is not None:
        model = swa_model.module
    model_config = model.config
    model.eval()

    dtype = choose_dtype(device, args.dtype)
    logging.info(f"Exporting with dtype {dtype}")

    wrapper = ExportWrapper(model).to(device=device, dtype=dtype).eval()
    inputs = make_dummy_inputs(model_config, args.batch_size, args.pos_len, device, dtype)

    with torch.no_grad():
        eager_out = wrapper(*inputs)
        traced = torch.jit.trace(wrapper, inputs, check_trace=False)
        traced = torch.jit.freeze(traced)
        traced_out = traced(*inputs)

    diff = max_abs_diff(eager_out, traced_out)
    logging.info(f"Max abs diff eager vs traced: {diff:.6f}")
    if not math.isfinite(diff) or diff > args.tolerance:
        logging.error("Traced module does not match eager model, refusing to export")
        sys.exit(1)

    # Sanity check at a different batch size, the engine batches dynamically
    with torch.no_grad():
        small_inputs = make_dummy_inputs(model_config, 1, args.pos_len, device, dtype)
        diff_small = max_abs_diff(wrapper(*small_inputs), traced(*small_inputs))
    logging.info(f"Max abs diff at batch 1: {diff_small:.6f}")

    out_path = os.path.join(args.export_dir, f"{args.model_name}.pt")
    torch.jit.save(traced, out_path)
    logging.info(f"Wrote {out_path}")

    metadata = {
        "name": args.model_name,
        "checkpoint": os.path.abspath(args.checkpoint),
        "pos_len": args.pos_len,
        "version": model_config["version"],
        "dtype": "fp16" if dtype == torch.float16 else "fp32",
        "swa": bool(args.use_swa),
        "trace_batch_size": args.batch_size,
        "max_abs_diff": diff,
    }

    if args.bench_iters > 0:
        for bs in (1, 8, 32, 128):
            bench_inputs = make_dummy_inputs(model_config, bs, args.pos_len, device, dtype)
            mean_ms, p95_ms = benchmark(traced, bench_inputs, args.bench_iters)
            logging.info(f"batch {bs:4d}: mean {mean_ms:.3f} ms  p95 {p95_ms:.3f} ms  ({bs / mean_ms * 1000.0:.0f} evals/s)")
            metadata[f"latency_ms_b{bs}"] = mean_ms
        metadata["gpu_mem_peak_mb"] = torch.cuda.max_memory_allocated(device) / (1024 * 1024)

    with open(os.path.join(args.export_dir, f"{args.model_name}.json"), "w") as f:
        json.dump(metadata, f, indent=2)


if __name__ == "__main__":
    main()
