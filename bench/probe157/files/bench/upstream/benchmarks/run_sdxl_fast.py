"""Accelerate SDXL inference the PyTorch-native way (bf16/fp16, SDPA, torch.compile, fused QKV).

Mirrors the "Accelerate inference of text-to-image diffusion models" tutorial:

    python run_sdxl_fast.py --run_compile --fuse_qkv --channels_last
    python run_sdxl_fast.py --no_sdpa          # baseline with the vanilla attention processor

Results are appended to sdxl_bench.csv (one row per configuration).
"""
import argparse
import csv
import os
import time

import torch
from diffusers import DiffusionPipeline, StableDiffusionXLPipeline
from diffusers.models.attention_processor import AttnProcessor

PROMPT = "Astronaut in a jungle, cold color palette, muted colors, detailed, 8k"
CKPT = "stabilityai/stable-diffusion-xl-base-1.0"


def load_pipeline(args):
    dtype = torch.bfloat16 if args.bf16 else torch.float16
    pipe = DiffusionPipeline.from_pretrained(CKPT, torch_dtype=dtype, use_safetensors=True)
    if args.no_sdpa:
        pipe.unet.set_default_attn_processor()
        pipe.vae.set_default_attn_processor()
    pipe = pipe.to("cuda")

    if args.fuse_qkv:
        pipe.fuse_qkv_projections()

    if args.channels_last:
        pipe.unet.to(memory_format=torch.channels_last)
        pipe.vae.to(memory_format=torch.channels_last)

    if args.run_compile:
        print("Run torch compile")
        torch._inductor.config.conv_1x1_as_mm = True
        torch._inductor.config.coordinate_descent_tuning = True
        torch._inductor.config.epilogue_fusion = False
        torch._inductor.config.coordinate_descent_check_all_directions = True

        pipe.unet = torch.compile(pipe.unet, mode="max-autotune", fullgraph=True)
        pipe.vae.decode = torch.compile(pipe.vae.decode, mode="max-autotune", fullgraph=True)

    pipe.set_progress_bar_config(disable=True)
    return pipe


def run_inference(pipe, args):
    return pipe(prompt=PROMPT, num_inference_steps=args.num_inference_steps, num_images_per_prompt=args.batch_size)


def benchmark_fn(f, *args, **kwargs):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = f(*args, **kwargs)
    torch.cuda.synchronize()  # wait for the VAE decode to finish
    return out, time.perf_counter() - t0


def main(args):
    # TF32 matmuls for anything that stays fp32 (text encoders' layer norms, schedulers)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.set_float32_matmul_precision("high")

    pipe = load_pipeline(args)

    # warmup (compilation happens here when --run_compile)
    for _ in range(3):
        run_inference(pipe, args)

    torch.cuda.reset_peak_memory_stats()
    _, latency = benchmark_fn(run_inference, pipe, args)
    memory = torch.cuda.max_memory_allocated() / (1024 ** 3)

    image = run_inference(pipe, args).images[0]
    os.makedirs("outputs", exist_ok=True)
    image.save(f"outputs/sdxl_bs{args.batch_size}_compile{int(args.run_compile)}.png")

    row = {
        "device": torch.cuda.get_device_name(),
        "dtype": "bf16" if args.bf16 else "fp16",
        "batch_size": args.batch_size,
        "steps": args.num_inference_steps,
        "sdpa": not args.no_sdpa,
        "fuse_qkv": args.fuse_qkv,
        "channels_last": args.channels_last,
        "compile": args.run_compile,
        "latency_s": round(latency, 3),
        "memory_gib": round(memory, 3),
    }
    print(row)
    write_header = not os.path.exists("sdxl_bench.csv")
    with open("sdxl_bench.csv", "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(row.keys()))
        if write_header:
            writer.writeheader()
        writer.writerow(row)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch_size", type=int, default=1)
    parser.add_argument("--num_inference_steps", type=int, default=30)
    parser.add_argument("--bf16", action="store_true")
    parser.add_argument("--no_sdpa", action="store_true")
    parser.add_argument("--fuse_qkv", action="store_true")
    parser.add_argument("--channels_last", action="store_true")
    parser.add_argument("--run_compile", action="store_true")
    args = parser.parse_args()
    main(args)
