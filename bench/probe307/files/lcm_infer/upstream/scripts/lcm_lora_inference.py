"""
Few-step text-to-image with LCM-LoRA (SD 1.5 / SDXL / SSD-1B) plus a tiny latency benchmark.

    python scripts/lcm_lora_inference.py --model stabilityai/stable-diffusion-xl-base-1.0 \
        --adapter latent-consistency/lcm-lora-sdxl --steps 4 --xformers
"""
import argparse
import os
import time

import torch
from diffusers import DiffusionPipeline, LCMScheduler
from diffusers.utils import make_image_grid

ADAPTERS = {
    "runwayml/stable-diffusion-v1-5": "latent-consistency/lcm-lora-sdv1-5",
    "stabilityai/stable-diffusion-xl-base-1.0": "latent-consistency/lcm-lora-sdxl",
    "segmind/SSD-1B": "latent-consistency/lcm-lora-ssd-1b",
}

PROMPTS = [
    "Self-portrait oil painting, a beautiful cyborg with golden hair, 8k",
    "Astronaut in a jungle, cold color palette, muted colors, detailed, 8k",
    "A photo of beautiful mountain with realistic sunset and blue lake, highly detailed, masterpiece",
    "close-up photography of old man standing in the rain at night, in a street lit by lamps, leica 35mm",
]


def get_device():
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="stabilityai/stable-diffusion-xl-base-1.0")
    p.add_argument("--adapter", default=None, help="LCM-LoRA repo id (inferred from --model if omitted)")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--guidance_scale", type=float, default=1.0)
    p.add_argument("--batch_size", type=int, default=4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default=None, help="cuda, mps or cpu (default: autodetect)")
    p.add_argument("--xformers", action="store_true", help="use xFormers memory-efficient attention")
    p.add_argument("--compile", action="store_true", help="torch.compile the UNet (PyTorch 2.x)")
    p.add_argument("--n_runs", type=int, default=5)
    p.add_argument("--out", default="lcm_lora_grid.png")
    return p.parse_args()


def main():
    args = parse_args()
    device = args.device or get_device()
    dtype = torch.float16 if device == "cuda" else torch.float32
    adapter_id = args.adapter or ADAPTERS[args.model]

    pipe = DiffusionPipeline.from_pretrained(args.model, variant="fp16", torch_dtype=dtype)
    pipe.scheduler = LCMScheduler.from_config(pipe.scheduler.config)
    pipe.to(device)

    # load and fuse lcm lora
    pipe.load_lora_weights(adapter_id)
    pipe.fuse_lora()

    if args.xformers:
        pipe.enable_xformers_memory_efficient_attention()
    if args.compile:
        pipe.unet.to(memory_format=torch.channels_last)
        pipe.unet = torch.compile(pipe.unet, mode="reduce-overhead", fullgraph=True)

    generator = torch.Generator(device=device).manual_seed(args.seed)
    prompts = (PROMPTS * args.batch_size)[: args.batch_size]

    # warmup (also triggers compilation)
    pipe(prompt=prompts[:1], num_inference_steps=args.steps, guidance_scale=args.guidance_scale)

    latencies = []
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
        for _ in range(args.n_runs):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            images = pipe(
                prompt=prompts,
                num_inference_steps=args.steps,
                guidance_scale=args.guidance_scale,
                generator=generator,
            ).images
            end.record()
            torch.cuda.synchronize()
            latencies.append(start.elapsed_time(end) / 1000.0)
        peak_mem = torch.cuda.max_memory_allocated() / 1024**3
        print(f"[{torch.cuda.get_device_name()}] peak memory: {peak_mem:.2f} GiB")
    else:
        for _ in range(args.n_runs):
            t0 = time.perf_counter()
            images = pipe(
                prompt=prompts,
                num_inference_steps=args.steps,
                guidance_scale=args.guidance_scale,
                generator=generator,
            ).images
            latencies.append(time.perf_counter() - t0)

    latencies.sort()
    print(
        f"{args.model} + {adapter_id}: {args.steps} steps, batch {args.batch_size}: "
        f"median {latencies[len(latencies) // 2]:.3f}s, best {latencies[0]:.3f}s"
    )

    grid = make_image_grid(images, rows=1, cols=len(images))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    grid.save(args.out)
    print(f"saved {args.out}")


if __name__ == "__main__":
    main()
