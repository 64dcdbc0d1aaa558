#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""
Name: Video2X PyTorch Upscaler
Description: Batch video upscaling through Real-ESRGAN / Real-CUGAN style
    PyTorch networks. Frames are decoded by an FFmpeg subprocess, upscaled
    tile by tile on the GPU and piped back into an FFmpeg encoder.

This module replaces the old ncnn/Vulkan drivers for users who have an NVIDIA
GPU and want the higher quality fp32/fp16 PyTorch models.
"""

import argparse
import contextlib
import math
import os
import pathlib
import queue
import subprocess
import sys
import threading
import time
from typing import List, Optional, Tuple

import numpy as np
import torch
from loguru import logger
from torch.nn import functional as F

from .archs import RRDBNet, SRVGGNetCompact

MODEL_URLS = {
    "realesrgan-x4plus": "https://github.com/xinntao/Real-ESRGAN/releases/download/v0.1.0/RealESRGAN_x4plus.pth",
    "realesr-animevideov3": "https://github.com/xinntao/Real-ESRGAN/releases/download/v0.2.5.0/realesr-animevideov3.pth",
}

# tile sizes that are known to fit, indexed by GiB of device memory
TILE_TABLE = [(4, 256), (8, 400), (12, 512), (24, 768), (48, 1024)]


def list_gpus() -> List[Tuple[int, str, int]]:
    """Return [(index, name, total_memory_MiB)] for every NVIDIA GPU on this host."""
    try:
        output = subprocess.check_output(["nvidia-smi", "--query-gpu=index,name,memory.total", "--format=csv,noheader,nounits"], text=True)
    except (FileNotFoundError, subprocess.CalledProcessError):
        return []
    gpus = []
    for line in output.strip().splitlines():
        index, name, memory = [field.strip() for field in line.split(",")]
        gpus.append((int(index), name, int(memory)))
    return gpus


def get_device(gpu_id: Optional[int]) -> torch.device:
    if gpu_id is None or gpu_id < 0 or not torch.cuda.is_available():
        return torch.device("cpu")
    return torch.device(f"cuda:{gpu_id}")


def build_model(name: str) -> torch.nn.Module:
    if name == "realesrgan-x4plus":
        return RRDBNet(num_in_ch=3, num_out_ch=3, num_feat=64, num_block=23, num_grow_ch=32, scale=4)
    if name == "realesr-animevideov3":
        return SRVGGNetCompact(num_in_ch=3, num_out_ch=3, num_feat=64, num_conv=16, upscale=4, act_type="prelu")
    raise ValueError(f"unknown model {name}")


class TorchUpscaler:
    def __init__(self, model_name: str, gpu_id: Optional[int] = 0, tile: int = 0, tile_pad: int = 10,
                 half: bool = True, scale: int = 4):
        self.scale = scale
        self.tile_pad = tile_pad
        self.device = get_device(gpu_id)

        if self.device.type == "cuda":
            major, _ = torch.cuda.get_device_capability(self.device)
            # Pascal and older have crippled fp16 throughput
            self.half = half and major >= 7
            total_gib = torch.cuda.get_device_properties(self.device).total_memory / 1024 ** 3
            logger.info(f"Using {torch.cuda.get_device_name(self.device)} ({total_gib:.1f} GiB), fp16={self.half}")
        else:
            self.half = False
            total_gib = 0
            logger.warning("No CUDA device available, running on the CPU. This will be very slow.")

        if tile == 0 and total_gib > 0:
            tile = next((t for gib, t in TILE_TABLE if total_gib <= gib), TILE_TABLE[-1][1])
        self.tile = tile

        model = build_model(model_name)
        state = torch.hub.load_state_dict_from_url(MODEL_URLS[model_name], map_location="cpu", progress=True)
        keyname = "params_ema" if "params_ema" in state else "params"
        model.load_state_dict(state[keyname], strict=True)
        model.eval()
        self.model = model.to(self.device)
        if self.half:
            self.model = self.model.half()

    def _pad(self, img: torch.Tensor) -> Tuple[torch.Tensor, int, int]:
        _, _, h, w = img.shape
        mod = 4 if self.scale == 2 else 2
        pad_h = (mod - h % mod) % mod
        pad_w = (mod - w % mod) % mod
        return F.pad(img, (0, pad_w, 0, pad_h), "reflect"), pad_h, pad_w

    @torch.inference_mode()
    def _tile_process(self, img: torch.Tensor) -> torch.Tensor:
        batch, channel, height, width = img.shape
        output = img.new_zeros((batch, channel, height * self.scale, width * self.scale))
        tiles_x = math.ceil(width / self.tile)
        tiles_y = math.ceil(height / self.tile)

        for y in range(tiles_y):
            for x in range(tiles_x):
                ofs_x, ofs_y = x * self.tile, y * self.tile
                in_x0, in_x1 = ofs_x, min(ofs_x + self.tile, width)
                in_y0, in_y1 = ofs_y, min(ofs_y + self.tile, height)
                pad_x0, pad_x1 = max(in_x0 - self.tile_pad, 0), min(in_x1 + self.tile_pad, width)
                pad_y0, pad_y1 = max(in_y0 - self.tile_pad, 0), min(in_y1 + self.tile_pad, height)

                tile_in = img[:, :, pad_y0:pad_y1, pad_x0:pad_x1]
                tile_out = self.model(tile_in)

                out_x0 = (in_x0 - pad_x0) * self.scale
                out_x1 = out_x0 + (in_x1 - in_x0) * self.scale
                out_y0 = (in_y0 - pad_y0) * self.scale
                out_y1 = out_y0 + (in_y1 - in_y0) * self.scale
                output[:, :, in_y0 * self.scale:in_y1 * self.scale, in_x0 * self.scale:in_x1 * self.scale] = \
                    tile_out[:, :, out_y0:out_y1, out_x0:out_x1]
        return output

    @torch.inference_mode()
    def upscale_frame(self, frame: np.ndarray) -> np.ndarray:
        img = torch.from_numpy(frame).permute(2, 0, 1).unsqueeze(0).to(self.device, non_blocking=True)
        img = img.half() if self.half else img.float()
        img = img / 255.0
        img, pad_h, pad_w = self._pad(img)

        while True:
            try:
                out = self._tile_process(img) if self.tile > 0 else self.model(img)
                break
            except torch.cuda.OutOfMemoryError:
                if self.tile == 0 or self.tile <= 64:
                    raise
                torch.cuda.empty_cache()
                self.tile //= 2
                logger.warning(f"Out of GPU memory, retrying with tile size {self.tile}")

        _, _, h, w = out.shape
        out = out[:, :, :h - pad_h * self.scale, :w - pad_w * self.scale]
        out = (out.squeeze(0).clamp_(0, 1) * 255.0).round().byte()
        return out.permute(1, 2, 0).cpu().numpy()


def probe_video(path: pathlib.Path) -> Tuple[int, int, float, int]:
    cmd = ["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets",
           "-show_entries", "stream=width,height,r_frame_rate,nb_read_packets", "-of", "csv=p=0", str(path)]
    width, height, rate, frames = subprocess.check_output(cmd, text=True).strip().split(",")
    num, den = rate.split("/")
    return int(width), int(height), float(num) / float(den), int(frames)


def open_decoder(path: pathlib.Path, hwaccel: Optional[str]) -> subprocess.Popen:
    cmd = ["ffmpeg", "-hide_banner", "-loglevel", "error"]
    if hwaccel is not None:
        cmd += ["-hwaccel", hwaccel]
    cmd += ["-i", str(path), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE)


def open_encoder(path: pathlib.Path, source: pathlib.Path, width: int, height: int, fps: float, codec: str, crf: int) -> subprocess.Popen:
    cmd = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-y",
           "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{width}x{height}", "-r", f"{fps}", "-i", "-",
           "-i", str(source), "-map", "0:v:0", "-map", "1:a?", "-c:a", "copy",
           "-c:v", codec, "-crf" if "nvenc" not in codec else "-cq", str(crf), "-pix_fmt", "yuv420p", str(path)]
    return subprocess.Popen(cmd, stdin=subprocess.PIPE)


def run(args: argparse.Namespace) -> int:
    gpus = list_gpus()
    if args.gpu is not None and args.gpu >= 0 and not gpus:
        logger.warning("nvidia-smi did not report any GPU, falling back to the CPU")
        args.gpu = -1
    for index, name, memory in gpus:
        logger.debug(f"GPU {index}: {name} {memory} MiB")

    upscaler = TorchUpscaler(args.model, gpu_id=args.gpu, tile=args.tile, half=not args.fp32)
    codec = args.codec or ("hevc_nvenc" if torch.cuda.is_available() else "libx265")

    width, height, fps, total = probe_video(args.input)
    decoder = open_decoder(args.input, args.hwaccel)
    encoder = open_encoder(args.output, args.input, width * upscaler.scale, height * upscaler.scale, fps, codec, args.crf)

    frame_bytes = width * height * 3
    frames_in: "queue.Queue[Optional[np.ndarray]]" = queue.Queue(maxsize=16)

    def reader():
        while True:
            buffer = decoder.stdout.read(frame_bytes)
            if len(buffer) < frame_bytes:
                frames_in.put(None)
                return
            frames_in.put(np.frombuffer(buffer, np.uint8).reshape(height, width, 3))

    threading.Thread(target=reader, daemon=True).start()

    start = time.time()
    done = 0
    while True:
        frame = frames_in.get()
        if frame is None:
            break
        encoder.stdin.write(upscaler.upscale_frame(frame).tobytes())
        done += 1
        if done % 50 == 0:
            if upscaler.device.type == "cuda":
                torch.cuda.synchronize(upscaler.device)
            elapsed = time.time() - start
            logger.info(f"{done}/{total} frames, {done / elapsed:.2f} fps")

    encoder.stdin.close()
    encoder.wait()
    decoder.wait()
    logger.success(f"Finished {done} frames in {time.time() - start:.1f}s -> {args.output}")
    return 0


def parse_arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="video2x-torch", formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("-i", "--input", type=pathlib.Path, required=True, help="input video")
    parser.add_argument("-o", "--output", type=pathlib.Path, required=True, help="output video")
    parser.add_argument("-m", "--model", choices=sorted(MODEL_URLS), default="realesr-animevideov3")
    parser.add_argument("-g", "--gpu", type=int, default=0, help="GPU index, -1 for CPU")
    parser.add_argument("-t", "--tile", type=int, default=0, help="tile size, 0 = pick from GPU memory")
    parser.add_argument("--fp32", action="store_true", help="disable fp16 inference")
    parser.add_argument("--hwaccel", choices=["cuda", "vaapi", "qsv"], default=None, help="FFmpeg hardware decoder")
    parser.add_argument("--codec", default=None, help="FFmpeg video encoder (default: hevc_nvenc on NVIDIA, libx265 otherwise)")
    parser.add_argument("--crf", type=int, default=18)
    return parser.parse_args()


def main():
    args = parse_arguments()
    if args.gpu is not None and args.gpu >= 0:
        os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(run(args))


if __name__ == "__main__":
    main()
