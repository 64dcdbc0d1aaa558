"""Iterative Pangu-Weather forecast with the released ONNX models.

Hierarchical temporal aggregation: for a lead time of T hours we use as many 24h
steps as possible, then 6h steps, restarting each chain from the last 24h output
(same scheme as the paper, Fig. 2).

    python inference_gpu.py --input_dir ./input_data --output_dir ./output_data --lead_time 168
"""
import argparse
import os
import time

import numpy as np
import onnx
import onnxruntime as ort

MODEL_24H = "pangu_weather_24.onnx"
MODEL_6H = "pangu_weather_6.onnx"


def parse_args():
    parser = argparse.ArgumentParser(description="Pangu-Weather ONNX inference on GPU")
    parser.add_argument("--model_dir", type=str, default="./models")
    parser.add_argument("--input_dir", type=str, default="./input_data")
    parser.add_argument("--output_dir", type=str, default="./output_data")
    parser.add_argument("--lead_time", type=int, default=24, help="forecast lead time in hours (multiple of 6)")
    parser.add_argument("--gpu_id", type=int, default=0, help="which GPU the CUDA execution provider runs on")
    parser.add_argument("--num_threads", type=int, default=1)
    parser.add_argument("--save_every", type=int, default=24, help="save every N hours")
    return parser.parse_args()


def build_session(model_path, options, device_id):
    # Reduce the GPU memory arena: the default kNextPowerOfTwo strategy
    # over-allocates for the 1.1 GB intermediate activations of the 24h model.
    cuda_provider_options = {
        "device_id": device_id,
        "arena_extend_strategy": "kSameAsRequested",
        "cudnn_conv_algo_search": "DEFAULT",
    }
    session = ort.InferenceSession(
        model_path,
        sess_options=options,
        providers=[("CUDAExecutionProvider", cuda_provider_options), "CPUExecutionProvider"],
    )
    active = session.get_providers()
    if active[0] != "CUDAExecutionProvider":
        print(f"[warn] {os.path.basename(model_path)} is running on {active[0]}, expect ~60x slower steps")
    return session


def load_inputs(input_dir):
    # upper-air: (5, 13, 721, 1440) = Z, Q, T, U, V on 1000..50 hPa
    # surface:   (4, 721, 1440)     = MSLP, U10, V10, T2M
    input_upper = np.load(os.path.join(input_dir, "input_upper.npy")).astype(np.float32)
    input_surface = np.load(os.path.join(input_dir, "input_surface.npy")).astype(np.float32)
    assert input_upper.shape == (5, 13, 721, 1440), input_upper.shape
    assert input_surface.shape == (4, 721, 1440), input_surface.shape
    return input_upper, input_surface


def save_outputs(output_dir, hour, upper, surface):
    os.makedirs(output_dir, exist_ok=True)
    np.save(os.path.join(output_dir, f"output_upper_{hour:03d}h.npy"), upper)
    np.save(os.path.join(output_dir, f"output_surface_{hour:03d}h.npy"), surface)


def main():
    args = parse_args()
    assert args.lead_time % 6 == 0, "lead time must be a multiple of 6 hours"

    # The model files are ~1.1 GB each; checking them once catches truncated downloads
    for name in (MODEL_24H, MODEL_6H):
        onnx.checker.check_model(os.path.join(args.model_dir, name))

    options = ort.SessionOptions()
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    options.enable_mem_reuse = False
    options.intra_op_num_threads = args.num_threads

    print("onnxruntime", ort.__version__, "device:", ort.get_device())
    ort_session_24 = build_session(os.path.join(args.model_dir, MODEL_24H), options, args.gpu_id)
    ort_session_6 = build_session(os.path.join(args.model_dir, MODEL_6H), options, args.gpu_id)

    input_upper, input_surface = load_inputs(args.input_dir)
    input_24, input_surface_24 = input_upper, input_surface
    output, output_surface = input_upper, input_surface

    n_steps = args.lead_time // 6
    t0 = time.time()
    for i in range(n_steps):
        hour = (i + 1) * 6
        if hour % 24 == 0:
            output, output_surface = ort_session_24.run(
                None, {"input": input_24, "input_surface": input_surface_24}
            )
            input_24, input_surface_24 = output, output_surface
        else:
            output, output_surface = ort_session_6.run(
                None, {"input": output, "input_surface": output_surface}
            )
        if hour % args.save_every == 0 or hour == args.lead_time:
            save_outputs(args.output_dir, hour, output, output_surface)
        print(f"step {i + 1}/{n_steps} (+{hour}h) done, {time.time() - t0:.1f}s elapsed")

    print("finished forecast up to +%dh" % args.lead_time)


if __name__ == "__main__":
    main()
