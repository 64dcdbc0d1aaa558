#!/usr/bin/env python
"""
Measure inference speed (FPS) and peak memory of a video segmentation model.

    python tools/benchmark_fps.py --config-file configs/ytvis19/DVIS_Online_R50.yaml \
        --num-videos 50 MODEL.WEIGHTS output/model_final.pth

Reported FPS = total frames / total model time (data loading excluded), measured with
CUDA events so that asynchronous kernel launches are accounted for.
"""
import argparse
import json
import logging
import os
import platform
import subprocess
import sys

import numpy as np
import torch
import tqdm

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from detectron2.checkpoint import DetectionCheckpointer
from detectron2.config import get_cfg
from detectron2.data import build_detection_test_loader
from detectron2.modeling import build_model
from detectron2.projects.deeplab import add_deeplab_config
from detectron2.utils.logger import setup_logger

from mask2former import add_maskformer2_config
from mask2former_video import add_maskformer2_video_config
from dvis import add_minvis_config, add_dvis_config, YTVISDatasetMapper

logger = logging.getLogger("benchmark_fps")


def get_env_info():
    """Collect a few lines describing the GPU box the numbers were measured on."""
    info = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "device": torch.cuda.get_device_name(0),
        "capability": "sm_%d%d" % torch.cuda.get_device_capability(0),
    }
    try:
        smi = subprocess.check_output(
            ["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm", "--format=csv,noheader"]
        ).decode().strip().splitlines()[0]
        info["driver"] = smi
    except Exception:
        info["driver"] = "unknown"
    return info


def setup(args):
    cfg = get_cfg()
    add_deeplab_config(cfg)
    add_maskformer2_config(cfg)
    add_maskformer2_video_config(cfg)
    add_minvis_config(cfg)
    add_dvis_config(cfg)
    cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    cfg.DATALOADER.NUM_WORKERS = 0
    cfg.freeze()
    setup_logger(name="fvcore")
    setup_logger()
    return cfg


@torch.no_grad()
def benchmark(cfg, num_videos, warmup):
    model = build_model(cfg)
    model.eval()
    DetectionCheckpointer(model).load(cfg.MODEL.WEIGHTS)

    if cfg.TEST.FP16:
        model = model.half()

    data_loader = build_detection_test_loader(
        cfg, cfg.DATASETS.TEST[0], mapper=YTVISDatasetMapper(cfg, is_train=False)
    )

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)

    total_ms, total_frames = 0.0, 0
    per_video = []
    torch.cuda.reset_peak_memory_stats()
    for idx, inputs in enumerate(tqdm.tqdm(data_loader, total=num_videos + warmup)):
        if idx >= num_videos + warmup:
            break
        if cfg.TEST.FP16:
            inputs[0]["image"] = [x.half() for x in inputs[0]["image"]]
        n = len(inputs[0]["image"])

        start_evt.record()
        _ = model(inputs)
        end_evt.record()
        torch.cuda.synchronize()

        ms = start_evt.elapsed_time(end_evt)
        if idx >= warmup:
            total_ms += ms
            total_frames += n
            per_video.append(n / (ms / 1000.0))
    fps = total_frames / (total_ms / 1000.0)
    peak = torch.cuda.max_memory_allocated() / 1024 ** 3
    return fps, float(np.median(per_video)), peak


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config-file", required=True, metavar="FILE")
    parser.add_argument("--num-videos", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--output", default="", help="append the result as one json line to this file")
    parser.add_argument("opts", default=None, nargs=argparse.REMAINDER)
    args = parser.parse_args()

    torch.backends.cudnn.benchmark = True
    cfg = setup(args)

    env = get_env_info()
    logger.info("Environment: {}".format(env))

    fps, median_fps, peak_gb = benchmark(cfg, args.num_videos, args.warmup)
    logger.info("FPS: {:.2f} (median per video {:.2f}), peak GPU memory {:.2f} GB".format(fps, median_fps, peak_gb))

    if args.output:
        with open(args.output, "a") as f:
            f.write(json.dumps({"config": args.config_file, "fps": fps, "peak_gb": peak_gb, **env}) + "\n")


if __name__ == "__main__":
    main()
