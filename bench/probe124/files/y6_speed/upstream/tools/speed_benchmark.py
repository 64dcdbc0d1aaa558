#!/usr/bin/env python3
# -*- coding:utf-8 -*-
"""
Latency / throughput benchmark for YOLO-style detectors (PyTorch backend).

Measures pure model forward time (optionally + NMS) with CUDA events, reports
mean / p50 / p90 latency, FPS and peak GPU memory. Used to produce the speed
column of the model zoo table (batch 1 and batch 32, FP16, TensorRT excluded).

Examples:
    python tools/speed_benchmark.py -f configs/yolov6s.py -w weights/yolov6s.pt --device 0 --half
    python tools/speed_benchmark.py -f configs/yolov6n.py --batch-size 32 --img-size 640 --half --channels-last
    python tools/speed_benchmark.py -f configs/yolov6m.py --compile --iters 500
"""

import argparse
import json
import os
import os.path as osp
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.backends.cudnn as cudnn

ROOT = os.getcwd()
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

from yolov6.layers.common import RepVGGBlock
from yolov6.models.yolo import build_model
from yolov6.utils.config import Config
from yolov6.utils.events import LOGGER
from yolov6.utils.nms import non_max_suppression
from yolov6.utils.torch_utils import fuse_model, get_model_info


def get_args_parser(add_help=True):
    parser = argparse.ArgumentParser(description="YOLOv6 PyTorch speed benchmark", add_help=add_help)
    parser.add_argument("-f", "--conf-file", type=str, default="configs/yolov6s.py", help="experiment config file")
    parser.add_argument("-w", "--weights", type=str, default=None, help="checkpoint path, random init if omitted")
    parser.add_argument("--img-size", type=int, default=640, help="inference size (pixels)")
    parser.add_argument("--batch-size", type=int, default=1, help="batch size")
    parser.add_argument("--device", default="0", type=str, help="cuda device, i.e. 0 or cpu")
    parser.add_argument("--half", action="store_true", help="whether to use fp16 inference")
    parser.add_argument("--channels-last", action="store_true", help="use NHWC memory format")
    parser.add_argument("--compile", action="store_true", help="wrap the model with torch.compile")
    parser.add_argument("--with-nms", action="store_true", help="include NMS in the timed region")
    parser.add_argument("--warmup", type=int, default=50, help="warmup iterations")
    parser.add_argument("--iters", type=int, default=200, help="timed iterations")
    parser.add_argument("--save-json", type=str, default="", help="write results to this json file")
    return parser


def select_device(device):
    if device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
        LOGGER.info("Using CPU for benchmarking (numbers are not representative).")
        return torch.device("cpu")
    assert torch.cuda.is_available(), "CUDA unavailable, invalid device {} requested".format(device)
    return torch.device(f"cuda:{device}")


def setup_backends(device):
    """Speed-oriented backend flags."""
    cudnn.benchmark = True
    cudnn.deterministic = False
    if device.type == "cuda" and torch.cuda.get_device_capability(device)[0] >= 8:
        # Ampere and newer: allow TF32 tensor cores for the fp32 path
        torch.backends.cuda.matmul.allow_tf32 = True
        cudnn.allow_tf32 = True


def build(cfg_file, weights, device, img_size):
    cfg = Config.fromfile(cfg_file)
    if not hasattr(cfg, "training_mode"):
        setattr(cfg, "training_mode", "repvgg")
    model = build_model(cfg, num_classes=80, device=device)
    if weights:
        ckpt = torch.load(weights, map_location="cpu")
        state = (ckpt.get("ema") or ckpt["model"]).float().state_dict()
        model.load_state_dict(state, strict=False)
        LOGGER.info(f"Loaded weights from {weights}")
    for layer in model.modules():
        if isinstance(layer, RepVGGBlock):
            layer.switch_to_deploy()
    model = fuse_model(model).eval()
    LOGGER.info("Model Summary: {}".format(get_model_info(model, img_size)))
    return model


def device_name(device):
    if device.type == "cpu":
        return platform.processor() or "cpu"
    return torch.cuda.get_device_name(device)


@torch.no_grad()
def benchmark(model, device, args):
    dtype = torch.float16 if args.half else torch.float32
    x = torch.randn(args.batch_size, 3, args.img_size, args.img_size, device=device, dtype=dtype)
    if args.channels_last:
        x = x.contiguous(memory_format=torch.channels_last)

    # Warmup (also triggers cudnn autotuning / compilation)
    for _ in range(args.warmup):
        y = model(x)
        if args.with_nms:
            non_max_suppression(y, 0.25, 0.45, max_det=300)
    if device.type == "cuda":  # drain warmup work before timing
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)

    timings = []
    if device.type == "cuda":  # CUDA events give device-side timings
        starter = torch.cuda.Event(enable_timing=True)
        ender = torch.cuda.Event(enable_timing=True)
        for _ in range(args.iters):
            starter.record()
            y = model(x)
            if args.with_nms:
                non_max_suppression(y, 0.25, 0.45, max_det=300)
            ender.record()
            torch.cuda.synchronize()
            timings.append(starter.elapsed_time(ender))  # milliseconds
        peak_mem = torch.cuda.max_memory_allocated(device) / 1024 ** 2
    else:
        for _ in range(args.iters):
            t0 = time.perf_counter()
            y = model(x)
            if args.with_nms:
                non_max_suppression(y, 0.25, 0.45, max_det=300)
            timings.append((time.perf_counter() - t0) * 1000)
        peak_mem = 0.0

    timings = np.asarray(timings)
    return {
        "mean_ms": float(timings.mean()),
        "p50_ms": float(np.percentile(timings, 50)),
        "p90_ms": float(np.percentile(timings, 90)),
        "fps": float(1000.0 * args.batch_size / timings.mean()),
        "peak_mem_mb": float(peak_mem),
    }


def main(args):
    device = select_device(args.device)
    setup_backends(device)
    LOGGER.info(f"torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {cudnn.version()}")
    LOGGER.info(f"Device: {device_name(device)}")

    model = build(args.conf_file, args.weights, device, args.img_size)
    model = model.to(device)
    if args.half:
        model = model.half()
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    res = benchmark(model, device, args)
    res.update(
        {
            "model": Path(args.conf_file).stem,
            "batch_size": args.batch_size,
            "img_size": args.img_size,
            "precision": "fp16" if args.half else "fp32",
            "device": device_name(device),
        }
    )
    LOGGER.info(
        "{model} bs={batch_size} {img_size}px {precision}: {mean_ms:.2f} ms (p50 {p50_ms:.2f}, p90 {p90_ms:.2f}), "
        "{fps:.1f} FPS, peak mem {peak_mem_mb:.0f} MB".format(**res)
    )
    if args.save_json:
        os.makedirs(osp.dirname(osp.abspath(args.save_json)), exist_ok=True)
        with open(args.save_json, "w") as f:
            json.dump(res, f, indent=2)
    torch.cuda.empty_cache()
    return res


if __name__ == "__main__":
    args = get_args_parser().parse_args()
    main(args)
