"""Run the released Pangu-Weather ONNX models on one GPU with the hierarchical temporal
aggregation strategy: as many 24-hour steps as possible, then 6-hour steps, then 1-hour steps.

    python inference_gpu.py --init 2018-09-27T12 --lead 168 --gpu 0

Inputs follow the official layout: input_upper.npy (5, 13, 721, 1440) and input_surface.npy
(4, 721, 1440), float32, pressure levels ordered 1000..50 hPa, latitude 90..-90.
"""
import argparse
import os
import time
from datetime import datetime, timedelta

import numpy as np
import onnx
import onnxruntime as ort

MODELS = {24: "pangu_weather_24.onnx", 6: "pangu_weather_6.onnx", 3: "pangu_weather_3.onnx", 1: "pangu_weather_1.onnx"}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model-dir", default="models")
    p.add_argument("--input-dir", default="input_data")
    p.add_argument("--output-dir", default="output_data")
    p.add_argument("--init", required=True, help="initial time, e.g. 2018-09-27T12")
    p.add_argument("--lead", type=int, default=168, help="lead time in hours")
    p.add_argument("--gpu", type=str, default="0")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--save-every", type=int, default=24)
    return p.parse_args()


def plan_steps(lead_hours: int):
    """Greedy decomposition of the lead time into 24/6/3/1-hour model calls (fewest calls)."""
    steps = []
    remaining = lead_hours
    for h in (24, 6, 3, 1):
        n, remaining = divmod(remaining, h)
        steps += [h] * n
    return steps


def make_session(path, options, provider):
    # the 24h model alone is ~1.1 GB; load once and keep the session alive for the whole rollout
    model = onnx.load(path)
    onnx.checker.check_model(model)
    return ort.InferenceSession(path, sess_options=options, providers=[provider])


def main():
    args = parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

    # Set the behaviour of onnxruntime
    options = ort.SessionOptions()
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    options.enable_mem_reuse = False
    # Increase the number for faster inference and more memory consumption
    options.intra_op_num_threads = args.threads

    # Set the behaviour of the cuda provider
    cuda_provider_options = {
        "device_id": 0,
        "arena_extend_strategy": "kSameAsRequested",
        "cudnn_conv_algo_search": "DEFAULT",
    }
    provider = ("CUDAExecutionProvider", cuda_provider_options)
    print("available providers:", ort.get_available_providers())

    steps = plan_steps(args.lead)
    needed = sorted(set(steps), reverse=True)
    sessions = {h: make_session(os.path.join(args.model_dir, MODELS[h]), options, provider) for h in needed}

    input_upper = np.load(os.path.join(args.input_dir, "input_upper.npy")).astype(np.float32)
    input_surface = np.load(os.path.join(args.input_dir, "input_surface.npy")).astype(np.float32)
    assert input_upper.shape == (5, 13, 721, 1440), input_upper.shape
    assert input_surface.shape == (4, 721, 1440), input_surface.shape

    init_time = datetime.strptime(args.init, "%Y-%m-%dT%H")
    os.makedirs(args.output_dir, exist_ok=True)

    # hierarchical temporal aggregation: the 24h model always restarts from the last 24h state
    state_24 = (input_upper, input_surface)
    upper, surface = input_upper, input_surface
    elapsed = 0
    t0 = time.time()
    for h in steps:
        src_upper, src_surface = (state_24 if h == 24 else (upper, surface))
        upper, surface = sessions[h].run(None, {"input": src_upper, "input_surface": src_surface})
        elapsed += h
        if h == 24:
            state_24 = (upper, surface)
        valid = init_time + timedelta(hours=elapsed)
        if elapsed % args.save_every == 0 or elapsed == args.lead:
            tag = valid.strftime("%Y%m%d%H")
            np.save(os.path.join(args.output_dir, f"output_upper_{tag}.npy"), upper)
            np.save(os.path.join(args.output_dir, f"output_surface_{tag}.npy"), surface)
        print(f"+{elapsed:4d}h ({h:2d}h model)  valid {valid:%Y-%m-%d %H}Z  {time.time() - t0:6.1f}s")

    print(f"done: {len(steps)} model calls for {args.lead} h in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
