#!/usr/bin/env python
"""Dump resized RGB frames of a video dataset as JPEGs, decoding and encoding on the GPU.

Uses torchvision's NVDEC video backend for decoding and nvJPEG for encoding, which is
5-10x faster than the ffmpeg/OpenCV CPU path on an 8-GPU node.

    python tools/data/extract_frames_gpu.py data/kinetics400/videos_train \
        data/kinetics400/rawframes_train --short-side 320 --shard 0 --num-shards 8
"""
import argparse
import glob
import os
import os.path as osp
import time

import torch
import torch.nn.functional as F
import torchvision
from torchvision.io import VideoReader, encode_jpeg, write_file


def parse_args():
    parser = argparse.ArgumentParser(description="extract frames with NVDEC + nvJPEG")
    parser.add_argument("src_dir", type=str, help="source video directory")
    parser.add_argument("out_dir", type=str, help="output rawframe directory")
    parser.add_argument("--ext", type=str, default="mp4", choices=["avi", "mp4", "webm", "mkv"])
    parser.add_argument("--short-side", type=int, default=320, help="resize the short side to this size")
    parser.add_argument("--every-n", type=int, default=1, help="keep every n-th frame")
    parser.add_argument("--quality", type=int, default=90, help="JPEG quality")
    parser.add_argument("--batch", type=int, default=32, help="frames encoded per nvJPEG call")
    parser.add_argument("--device", type=str, default="cuda:0", help="GPU used for decode/encode")
    parser.add_argument("--shard", type=int, default=0)
    parser.add_argument("--num-shards", type=int, default=1)
    return parser.parse_args()


def resize_short_side(frames, short_side):
    """frames: (N, C, H, W) uint8 on the decode device."""
    _, _, h, w = frames.shape
    if min(h, w) == short_side:
        return frames
    if h < w:
        size = (short_side, int(round(w * short_side / h)))
    else:
        size = (int(round(h * short_side / w)), short_side)
    out = F.interpolate(frames.float(), size=size, mode="bilinear", align_corners=False, antialias=False)
    return out.clamp_(0, 255).to(torch.uint8)


def flush(batch, names, quality):
    if not batch:
        return 0
    frames = torch.stack(batch)
    encoded = encode_jpeg(list(frames), quality=quality)
    for data, name in zip(encoded, names):
        write_file(name, data.cpu())
    return len(batch)


def extract_one(path, out_dir, device, short_side, every_n, quality, batch_size):
    os.makedirs(out_dir, exist_ok=True)
    reader = VideoReader(path, "video", device=device)
    batch, names, written, idx = [], [], 0, 0
    for frame in reader:
        if idx % every_n == 0:
            img = frame["data"]
            if img.shape[-1] == 3:  # HWC from the NVDEC backend
                img = img.permute(2, 0, 1)
            img = resize_short_side(img.unsqueeze(0), short_side)[0]
            batch.append(img)
            names.append(osp.join(out_dir, "img_{:05d}.jpg".format(idx // every_n + 1)))
            if len(batch) == batch_size:
                written += flush(batch, names, quality)
                batch, names = [], []
        idx += 1
    written += flush(batch, names, quality)
    return written


def main():
    args = parse_args()
    torchvision.set_video_backend("cuda")
    device = torch.device(args.device)
    torch.cuda.set_device(device)

    videos = sorted(glob.glob(osp.join(args.src_dir, "**", "*." + args.ext), recursive=True))
    videos = videos[args.shard::args.num_shards]
    print(f"{len(videos)} videos in shard {args.shard}/{args.num_shards}")

    t0 = time.time()
    total = 0
    for i, path in enumerate(videos):
        rel = osp.splitext(osp.relpath(path, args.src_dir))[0]
        out_dir = osp.join(args.out_dir, rel)
        if osp.isdir(out_dir) and len(os.listdir(out_dir)) > 0:
            continue
        try:
            total += extract_one(path, out_dir, device, args.short_side, args.every_n, args.quality, args.batch)
        except RuntimeError as e:
            print(f"[skip] {path}: {e}")
        if i % 100 == 0:
            torch.cuda.synchronize()
            fps = total / max(time.time() - t0, 1e-6)
            print(f"[{i}/{len(videos)}] {total} frames, {fps:.0f} frames/s")

    torch.cuda.synchronize(device)
    peak = torch.cuda.max_memory_allocated(device) / 2**20
    print(f"done: {total} frames in {time.time() - t0:.1f}s, peak device memory {peak:.0f} MiB")


if __name__ == "__main__":
    main()
