"""LCM-LoRA SDXL: 4-step text-to-image, with a small latency benchmark.

    python lcm_lora_sdxl.py --prompt "close-up photography of old man standing in the rain at night" --steps 4
    python lcm_lora_sdxl.py --benchmark --runs 10

Numbers in the LCM-LoRA report were measured on an A100 with fp16 weights and SDPA attention.
"""
import argparse
import os
import time

import torch
from diffusers import AutoPipelineForText2Image, DiffusionPipeline, LCMScheduler

MODEL_ID = "stabilityai/stable-diffusion-xl-base-1.0"
ADAPTER_ID = "latent-consistency/lcm-lora-sdxl"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--prompt", default="Self-portrait oil painting, a beautiful cyborg with golden hair, 8k")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--guidance", type=float, default=1.0, help="LCM-LoRA works best with cfg in [1, 2]")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fuse", action="store_true", help="fuse LoRA weights into the UNet")
    p.add_argument("--benchmark", action="store_true")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--out", default="lcm_lora_sdxl.png")
    return p.parse_args()


def load(fuse: bool):
    pipe = DiffusionPipeline.from_pretrained(MODEL_ID, variant="fp16", torch_dtype=torch.float16)
    pipe.scheduler = LCMScheduler.from_config(pipe.scheduler.config)
    pipe.to("cuda")

    # load and fuse lcm lora
    pipe.load_lora_weights(ADAPTER_ID)
    if fuse:
        pipe.fuse_lora()
    return pipe


@torch.inference_mode()
def benchmark(pipe, prompt, steps, guidance, runs):
    # warmup: the first call pays for cuDNN autotuning and allocator growth
    for _ in range(2):
        pipe(prompt=prompt, num_inference_steps=steps, guidance_scale=guidance)

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.reset_peak_memory_stats()

    times = []
    for _ in range(runs):
        start.record()
        # pin SDPA to the FlashAttention kernel so runs are comparable across torch versions
        with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False):
            pipe(prompt=prompt, num_inference_steps=steps, guidance_scale=guidance)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))

    mem = torch.cuda.max_memory_allocated() / 1024**3
    print(f"{steps} steps: mean {sum(times) / len(times):.1f} ms, min {min(times):.1f} ms over {runs} runs")
    print(f"peak memory {mem:.2f} GiB on {torch.cuda.get_device_name(0)}")


def main():
    args = parse_args()
    torch.backends.cudnn.benchmark = True

    pipe = load(args.fuse)

    if args.benchmark:
        benchmark(pipe, args.prompt, args.steps, args.guidance, args.runs)
        return

    generator = torch.manual_seed(args.seed)
    t0 = time.perf_counter()
    image = pipe(
        prompt=args.prompt, num_inference_steps=args.steps, generator=generator, guidance_scale=args.guidance
    ).images[0]
    print(f"generated in {time.perf_counter() - t0:.2f}s")
    image.save(args.out)


if __name__ == "__main__":
    main()
