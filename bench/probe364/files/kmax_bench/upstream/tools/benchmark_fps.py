"""
Measure the inference speed (FPS) of a kMaX-DeepLab model on a single GPU.

    python tools/benchmark_fps.py --config-file configs/coco/panoptic_segmentation/kmax_r50.yaml \
        MODEL.WEIGHTS kmax_r50.pth

Reported numbers in the paper were measured on a V100 with batch size 1, FP32 and the
input resolution of the config (1281x1281 on COCO).
"""
import argparse
import logging
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from detectron2.checkpoint import DetectionCheckpointer
from detectron2.config import get_cfg
from detectron2.modeling import build_model
from detectron2.projects.deeplab import add_deeplab_config
from detectron2.utils.logger import setup_logger

from kmax_deeplab import add_kmax_deeplab_config

logger = logging.getLogger("kmax_benchmark")


def get_args():
    parser = argparse.ArgumentParser(description="kMaX-DeepLab FPS benchmark")
    parser.add_argument("--config-file", required=True, metavar="FILE")
    parser.add_argument("--num-warmup", type=int, default=50)
    parser.add_argument("--num-iters", type=int, default=300)
    parser.add_argument("--fp16", action="store_true", help="run inference under autocast")
    parser.add_argument("opts", default=None, nargs=argparse.REMAINDER)
    return parser.parse_args()


def setup_cfg(args):
    cfg = get_cfg()
    add_deeplab_config(cfg)
    add_kmax_deeplab_config(cfg)
    cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    cfg.freeze()
    return cfg


@torch.no_grad()
def main():
    args = get_args()
    setup_logger(name="kmax_benchmark")
    cfg = setup_cfg(args)

    torch.backends.cudnn.benchmark = True
    model = build_model(cfg)
    DetectionCheckpointer(model).load(cfg.MODEL.WEIGHTS)
    model.eval()

    h, w = cfg.INPUT.IMAGE_SIZE
    image = torch.randint(0, 255, (3, h, w), dtype=torch.uint8).float().cuda()
    inputs = [{"image": image, "height": h, "width": w}]

    def run_once():
        with torch.cuda.amp.autocast(enabled=args.fp16):
            return model(inputs)

    logger.info("Device: {}".format(torch.cuda.get_device_name(0)))
    logger.info("Warming up for {} iterations ...".format(args.num_warmup))
    for _ in range(args.num_warmup):
        run_once()
    torch.cuda.synchronize()

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = np.zeros(args.num_iters)
    for i in range(args.num_iters):
        starter.record()
        run_once()
        ender.record()
        torch.cuda.synchronize()  # wait for the end event
        timings[i] = starter.elapsed_time(ender)  # milliseconds

    mean_ms = timings.mean()
    logger.info("Average latency: {:.2f} ms (std {:.2f} ms)".format(mean_ms, timings.std()))
    logger.info("FPS: {:.2f}".format(1000.0 / mean_ms))
    logger.info("Peak memory: {:.1f} MB".format(torch.cuda.max_memory_allocated() / 2 ** 20))


if __name__ == "__main__":
    main()
