#!/usr/bin/env python
"""Measure detector / scene-graph model throughput on a single GPU.

    python tools/benchmark_speed.py --config-file configs/e2e_relation_X_101_32_8_FPN_1x.yaml \
        --gpu 0 --batch-size 2 --fp16 MODEL.ROI_RELATION_HEAD.PREDICTOR MotifPredictor

Numbers in the README table were produced with this script on a V100-SXM2-32GB
(CUDA 10.1, cuDNN 7.6) with --warmup 20 --iters 200.
"""
import argparse
import json
import os
import time

import torch

from maskrcnn_benchmark.config import cfg
from maskrcnn_benchmark.modeling.detector import build_detection_model
from maskrcnn_benchmark.structures.bounding_box import BoxList
from maskrcnn_benchmark.structures.image_list import to_image_list
from maskrcnn_benchmark.utils.checkpoint import DetectronCheckpointer

try:
    import pynvml
except ImportError:  # monitoring is optional
    pynvml = None


def parse_args():
    parser = argparse.ArgumentParser(description="SGG speed benchmark")
    parser.add_argument("--config-file", required=True, metavar="FILE")
    parser.add_argument("--weights", default="", help="optional checkpoint; random init otherwise")
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--height", type=int, default=600)
    parser.add_argument("--width", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--fp16", action="store_true", help="run under autocast")
    parser.add_argument("--nvtx", action="store_true", help="emit NVTX ranges for nsys")
    parser.add_argument("--out", default="", help="append a json line with the results")
    parser.add_argument("opts", default=None, nargs=argparse.REMAINDER)
    return parser.parse_args()


def fake_targets(num_images, image_size, num_boxes, device):
    """PredCls/SGCls need GT boxes at test time; fabricate a fixed set of them."""
    w, h = image_size
    targets = []
    for _ in range(num_images):
        xy = torch.rand(num_boxes, 2, device=device) * torch.tensor([w * 0.7, h * 0.7], device=device)
        wh = torch.rand(num_boxes, 2, device=device) * torch.tensor([w * 0.3, h * 0.3], device=device) + 8
        boxes = torch.cat([xy, xy + wh], dim=1)
        target = BoxList(boxes, (w, h), mode="xyxy")
        target.add_field("labels", torch.randint(1, 151, (num_boxes,), device=device))
        targets.append(target)
    return targets


def gpu_utilization(index):
    if pynvml is None:
        return None
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    util = pynvml.nvmlDeviceGetUtilizationRates(handle)
    mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
    pynvml.nvmlShutdown()
    return {"sm_util": util.gpu, "mem_used_mb": mem.used / 2 ** 20}


def main():
    args = parse_args()
    cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    cfg.freeze()

    torch.backends.cudnn.benchmark = True
    torch.cuda.set_device(args.gpu)
    device = torch.device("cuda", args.gpu)

    model = build_detection_model(cfg)
    model.to(device)
    model.eval()
    if args.weights:
        DetectronCheckpointer(cfg, model).load(args.weights)

    images = [torch.rand(3, args.height, args.width, device=device) * 255 for _ in range(args.batch_size)]
    image_list = to_image_list(images, cfg.DATALOADER.SIZE_DIVISIBILITY)
    targets = fake_targets(args.batch_size, (args.width, args.height), 20, device)

    major, minor = torch.cuda.get_device_capability(device)
    if args.fp16 and major < 7:
        print("warning: --fp16 on sm_{}{} has no tensor cores".format(major, minor))

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    torch.cuda.reset_peak_memory_stats(device)

    with torch.no_grad():
        for _ in range(args.warmup):
            with torch.cuda.amp.autocast(enabled=args.fp16):
                model(image_list, targets)
        torch.cuda.synchronize(device)

        start_evt.record()
        wall = time.time()
        for it in range(args.iters):
            if args.nvtx:
                torch.cuda.nvtx.range_push("iter{}".format(it))
            with torch.cuda.amp.autocast(enabled=args.fp16):
                model(image_list, targets)
            if args.nvtx:
                torch.cuda.nvtx.range_pop()
        end_evt.record()
        torch.cuda.synchronize(device)
        wall = time.time() - wall

    elapsed_ms = start_evt.elapsed_time(end_evt)
    per_img_ms = elapsed_ms / (args.iters * args.batch_size)
    result = {
        "device": torch.cuda.get_device_name(device),
        "capability": "sm_{}{}".format(major, minor),
        "predictor": cfg.MODEL.ROI_RELATION_HEAD.PREDICTOR,
        "batch_size": args.batch_size,
        "fp16": args.fp16,
        "ms_per_img": round(per_img_ms, 2),
        "img_per_s": round(1000.0 / per_img_ms, 2),
        "wall_s": round(wall, 1),
        "peak_mem_mb": round(torch.cuda.max_memory_allocated(device) / 2 ** 20, 1),
        "nvml": gpu_utilization(args.gpu),
    }
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
