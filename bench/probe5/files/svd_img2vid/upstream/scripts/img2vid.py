#!/usr/bin/env python
"""
Image-to-video with Stable Video Diffusion (diffusers).

    python scripts/img2vid.py --image examples/rocket.png --out out/rocket.mp4 \
        --frames 25 --fps 7 --motion-bucket-id 127 --offload

Memory modes: default keeps the whole pipeline on the device; --offload moves sub-models to
the device only while they run; --chunk-decode bounds VAE decode memory; --compile compiles
the UNet for repeated generations.
"""
import argparse
import os
import time

import torch
from diffusers import StableVideoDiffusionPipeline
from diffusers.utils import export_to_video, load_image
from PIL import Image

MODEL_ID = "stabilityai/stable-video-diffusion-img2vid-xt"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--image", required=True)
    p.add_argument("--out", default="out/video.mp4")
    p.add_argument("--model", default=MODEL_ID)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--height", type=int, default=576)
    p.add_argument("--frames", type=int, default=25)
    p.add_argument("--fps", type=int, default=7)
    p.add_argument("--steps", type=int, default=25)
    p.add_argument("--motion-bucket-id", type=int, default=127)
    p.add_argument("--noise-aug-strength", type=float, default=0.02)
    p.add_argument("--min-guidance", type=float, default=1.0)
    p.add_argument("--max-guidance", type=float, default=3.0)
    p.add_argument("--decode-chunk-size", type=int, default=8)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--offload", action="store_true", help="model CPU offload (lower peak memory)")
    p.add_argument("--forward-chunking", action="store_true", help="chunk the UNet feed-forward layers")
    p.add_argument("--xformers", action="store_true", help="memory-efficient attention from xformers")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--repeat", type=int, default=1, help="generate N times (timing, compile warm-up)")
    p.add_argument("--gif", action="store_true", help="also write an animated GIF preview")
    return p.parse_args()


def save_gif(frames, path, fps, max_side=512):
    """Small looping preview next to the mp4 (frames are PIL images)."""
    w, h = frames[0].size
    scale = min(1.0, max_side / max(w, h))
    if scale < 1.0:
        frames = [f.resize((int(w * scale), int(h * scale)), Image.BILINEAR) for f in frames]
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=int(1000 / fps), loop=0)


def prepare_image(path, width, height):
    image = load_image(path).convert("RGB")
    # center-crop to the target aspect ratio, then resize
    w, h = image.size
    target = width / height
    if w / h > target:
        new_w = int(h * target)
        left = (w - new_w) // 2
        image = image.crop((left, 0, left + new_w, h))
    else:
        new_h = int(w / target)
        top = (h - new_h) // 2
        image = image.crop((0, top, w, top + new_h))
    return image.resize((width, height), Image.BICUBIC)


def main():
    args = parse_args()
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = True

    pipe = StableVideoDiffusionPipeline.from_pretrained(args.model, torch_dtype=torch.float16, variant="fp16")
    if args.offload:
        pipe.enable_model_cpu_offload()
    else:
        pipe.to("cuda")
    if args.forward_chunking:
        pipe.unet.enable_forward_chunking()
    if args.xformers:
        pipe.enable_xformers_memory_efficient_attention()
    if args.compile:
        pipe.unet = torch.compile(pipe.unet, mode="reduce-overhead", fullgraph=True)

    image = prepare_image(args.image, args.width, args.height)
    generator = torch.Generator(device="cuda").manual_seed(args.seed)

    frames = None
    for i in range(args.repeat):
        torch.cuda.reset_peak_memory_stats()
        t0 = time.time()
        result = pipe(
            image,
            height=args.height,
            width=args.width,
            num_frames=args.frames,
            num_inference_steps=args.steps,
            min_guidance_scale=args.min_guidance,
            max_guidance_scale=args.max_guidance,
            fps=args.fps,
            motion_bucket_id=args.motion_bucket_id,
            noise_aug_strength=args.noise_aug_strength,
            decode_chunk_size=args.decode_chunk_size,
            generator=generator,
        )
        frames = result.frames[0]
        dt = time.time() - t0
        peak = torch.cuda.max_memory_allocated() / 2**30
        print(f"run {i}: {len(frames)} frames in {dt:.1f}s, peak {peak:.1f} GiB")

    export_to_video(frames, args.out, fps=args.fps)
    print(f"wrote {args.out}")
    if args.gif:
        gif_path = os.path.splitext(args.out)[0] + ".gif"
        save_gif(frames, gif_path, args.fps)
        print(f"wrote {gif_path}")


if __name__ == "__main__":
    main()
