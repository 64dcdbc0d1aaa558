"""
Measure the cost of test-time adaptation: wall-clock time per batch, throughput and peak GPU memory
for each method, on random inputs of the benchmark resolution.

    python benchmark_efficiency.py --cfg cfgs/imagenet_c/tent.yaml --iters 50 --warmup 10

The numbers go into the "Efficiency" table (ms / batch and GB).  Timings use CUDA events, so
asynchronous kernel launches are accounted for.
"""

import argparse
import json
import logging
import os
import time

import numpy as np
import torch
import torch.nn as nn

from conf import cfg, load_cfg_from_args, get_num_classes
from models.model import get_model
from utils.registry import ADAPTATION_REGISTRY

logger = logging.getLogger(__name__)

DEVICE = torch.device("cuda:0")


def parse_extra():
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--out", type=str, default="efficiency.json")
    parser.add_argument("--channels_last", action="store_true",
                        help="run the backbone in NHWC (faster convs with cudnn on Volta+)")
    args, _ = parser.parse_known_args()
    return args


def make_inputs(batch_size, img_size, num_classes):
    x = torch.rand(batch_size, 3, img_size, img_size, device=DEVICE)
    y = torch.randint(0, num_classes, (batch_size,), device="cuda")
    return x, y


@torch.no_grad()
def count_params(model):
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return total, trainable


def time_method(model, x, iters, warmup):
    """Returns (mean ms per batch, std ms) measured with CUDA events."""
    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = np.zeros((iters, 1))

    for _ in range(warmup):
        _ = model(x)
    torch.cuda.synchronize()

    for rep in range(iters):
        starter.record()
        _ = model(x)
        ender.record()
        # wait for gpu sync
        torch.cuda.synchronize(DEVICE)
        timings[rep] = starter.elapsed_time(ender)
    return float(np.mean(timings)), float(np.std(timings))


def main(description):
    extra = parse_extra()
    load_cfg_from_args(description)
    num_classes = get_num_classes(dataset_name=cfg.CORRUPTION.DATASET)
    img_size = 32 if "cifar" in cfg.CORRUPTION.DATASET else 224

    base_model, model_preprocess = get_model(cfg, num_classes, DEVICE)
    base_model.model_preprocess = model_preprocess
    if extra.channels_last:
        base_model = base_model.to(memory_format=torch.channels_last)

    model = ADAPTATION_REGISTRY.get(cfg.MODEL.ADAPTATION)(cfg=cfg, model=base_model, num_classes=num_classes)
    total, trainable = count_params(base_model)

    x, _ = make_inputs(cfg.TEST.BATCH_SIZE, img_size, num_classes)

    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(DEVICE)
    mean_ms, std_ms = time_method(model, x, extra.iters, extra.warmup)
    peak_gb = torch.cuda.max_memory_allocated(DEVICE) / 1024 ** 3

    res = {
        "method": cfg.MODEL.ADAPTATION,
        "arch": cfg.MODEL.ARCH,
        "batch_size": cfg.TEST.BATCH_SIZE,
        "ms_per_batch": round(mean_ms, 2),
        "ms_std": round(std_ms, 2),
        "imgs_per_s": round(cfg.TEST.BATCH_SIZE / (mean_ms / 1000.0), 1),
        "peak_mem_gb": round(peak_gb, 3),
        "params_total": total,
        "params_trainable": trainable,
        "gpu": torch.cuda.get_device_name(DEVICE),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
    }
    logger.info(json.dumps(res, indent=2))

    results = []
    if os.path.exists(extra.out):
        with open(extra.out) as f:
            results = json.load(f)
    results.append(res)
    with open(extra.out, "w") as f:
        json.dump(results, f, indent=2)


if __name__ == "__main__":
    main('"Efficiency benchmark.')
