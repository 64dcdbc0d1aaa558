"""
Latency / throughput benchmark for SDXL-Turbo and SD-Turbo (1-4 steps, guidance 0).

    python scripts/benchmark_sdxl_turbo.py --model stabilityai/sdxl-turbo --steps 1 --compile --profile
"""
import argparse
import json
import os
import time

import torch
from diffusers import AutoPipelineForImage2Image, AutoPipelineForText2Image
from diffusers.utils import load_image
from torch.profiler import ProfilerActivity, profile, record_function

PROMPT = "A cinematic shot of a baby racoon wearing an intricate italian priest robe."


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="stabilityai/sdxl-turbo")
    p.add_argument("--steps", type=int, default=1)
    p.add_argument("--batch_size", type=int, default=1)
    p.add_argument("--resolution", type=int, default=512)
    p.add_argument("--img2img", action="store_true")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--channels_last", action="store_true")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--out", default="bench_results.json")
    return p.parse_args()


def set_inductor_flags():
    # https://pytorch.org/blog/accelerating-generative-ai-3/
    torch._inductor.config.conv_1x1_as_mm = True
    torch._inductor.config.coordinate_descent_tuning = True
    torch._inductor.config.epilogue_fusion = False
    torch._inductor.config.coordinate_descent_check_all_directions = True


def build_pipeline(args):
    cls = AutoPipelineForImage2Image if args.img2img else AutoPipelineForText2Image
    pipe = cls.from_pretrained(args.model, torch_dtype=torch.float16, variant="fp16")
    pipe = pipe.to("cuda")
    pipe.set_progress_bar_config(disable=True)

    if args.channels_last:
        pipe.unet.to(memory_format=torch.channels_last)
        pipe.vae.to(memory_format=torch.channels_last)
    if args.compile:
        set_inductor_flags()
        pipe.unet = torch.compile(pipe.unet, mode="max-autotune", fullgraph=True)
        pipe.vae.decode = torch.compile(pipe.vae.decode, mode="max-autotune", fullgraph=True)
    return pipe


def run_once(pipe, args, init_image=None):
    kwargs = dict(
        prompt=[PROMPT] * args.batch_size,
        num_inference_steps=args.steps,
        guidance_scale=0.0,
        height=args.resolution,
        width=args.resolution,
    )
    if init_image is not None:
        kwargs.update(image=init_image, strength=0.5)
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=True):
        return pipe(**kwargs).images


def main():
    args = parse_args()
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    pipe = build_pipeline(args)
    init_image = None
    if args.img2img:
        init_image = load_image(
            "https://huggingface.co/datasets/huggingface/documentation-images/resolve/main/diffusers/cat.png"
        ).resize((args.resolution, args.resolution))

    # warmup (compilation happens here)
    for _ in range(3):
        run_once(pipe, args, init_image)

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(args.runs):
        start_evt.record()
        images = run_once(pipe, args, init_image)
        end_evt.record()
        torch.cuda.synchronize()
        times.append(start_evt.elapsed_time(end_evt))

    times.sort()
    result = {
        "model": args.model,
        "gpu": torch.cuda.get_device_name(0),
        "steps": args.steps,
        "batch_size": args.batch_size,
        "resolution": args.resolution,
        "compile": args.compile,
        "median_ms": times[len(times) // 2],
        "min_ms": times[0],
        "images_per_s": 1000.0 * args.batch_size / times[len(times) // 2],
        "peak_mem_gb": torch.cuda.max_memory_allocated() / 1e9,
    }
    print(json.dumps(result, indent=2))
    with open(args.out, "a") as f:
        f.write(json.dumps(result) + "\n")
    images[0].save(os.path.splitext(args.out)[0] + ".png")

    if args.profile:
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
            with record_function("sdxl_turbo_step"):
                run_once(pipe, args, init_image)
        print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25))
        prof.export_chrome_trace("sdxl_turbo_trace.json")


if __name__ == "__main__":
    main()
