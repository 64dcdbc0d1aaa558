#!/usr/bin/env python
"""Text-to-image with FLUX.1 [dev]/[schnell], with optional CPU offload and torch.compile.

    python flux_txt2img.py --prompt "a tiny astronaut hatching from an egg on the moon" --offload model
"""
import argparse
import os
import time

import torch

from diffusers import FluxPipeline
from diffusers.utils import logging


logger = logging.get_logger(__name__)

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def parse_args():
    parser = argparse.ArgumentParser(description="FLUX text-to-image")
    parser.add_argument("--model", type=str, default="black-forest-labs/FLUX.1-dev")
    parser.add_argument("--prompt", type=str, required=True)
    parser.add_argument("--height", type=int, default=1024)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=28)
    parser.add_argument("--guidance_scale", type=float, default=3.5)
    parser.add_argument("--num_images", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dtype", type=str, default="bf16", choices=list(DTYPES))
    parser.add_argument("--device", type=str, default="auto", help="auto, cuda, cuda:1, mps or cpu")
    parser.add_argument("--gpu_id", type=int, default=0, help="GPU used by --offload")
    parser.add_argument("--offload", type=str, default="none", choices=["none", "model", "sequential"])
    parser.add_argument("--compile", action="store_true", help="torch.compile the transformer (slow first call)")
    parser.add_argument("--output_dir", type=str, default="outputs")
    return parser.parse_args()


def get_device(device_arg: str) -> str:
    if device_arg != "auto":
        return device_arg
    if torch.backends.mps.is_available():
        return "mps"
    return "cuda" if torch.cuda.is_available() else "cpu"


def main():
    args = parse_args()
    device = get_device(args.device)
    torch_dtype = DTYPES[args.dtype]
    if device == "cpu" and torch_dtype == torch.float16:
        logger.warning("fp16 is not supported on cpu, switching to fp32")
        torch_dtype = torch.float32

    pipe = FluxPipeline.from_pretrained(args.model, torch_dtype=torch_dtype)

    if args.offload == "model":
        pipe.enable_model_cpu_offload(gpu_id=args.gpu_id)
    elif args.offload == "sequential":
        pipe.enable_sequential_cpu_offload(gpu_id=args.gpu_id)
    else:
        pipe.to(device)

    pipe.vae.enable_tiling()

    if args.compile:
        pipe.transformer.to(memory_format=torch.channels_last)
        pipe.transformer = torch.compile(pipe.transformer, mode="max-autotune", fullgraph=True)

    # CPU generator keeps results reproducible across devices
    generator = torch.Generator(device="cpu").manual_seed(args.seed)

    if "cuda" in device:
        torch.cuda.reset_peak_memory_stats()

    start = time.perf_counter()
    images = pipe(
        args.prompt,
        height=args.height,
        width=args.width,
        guidance_scale=args.guidance_scale,
        num_inference_steps=args.steps,
        num_images_per_prompt=args.num_images,
        max_sequence_length=512,
        generator=generator,
    ).images
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start

    os.makedirs(args.output_dir, exist_ok=True)
    for i, image in enumerate(images):
        image.save(os.path.join(args.output_dir, f"flux_{args.seed}_{i}.png"))

    msg = f"{len(images)} image(s) in {elapsed:.1f}s on {device}"
    if torch.cuda.is_available():
        msg += f", peak GPU memory {torch.cuda.max_memory_allocated() / 1024**3:.2f} GB"
    print(msg)


if __name__ == "__main__":
    main()
