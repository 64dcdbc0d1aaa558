"""
Batch multi-view generation with Zero123++.

Generates the 3x2 grid of six views for every image in a folder and also writes the
individual views, which is what the downstream reconstruction scripts expect.

Usage:
    python examples/batch_mv.py --input_dir ./inputs --output_dir ./outputs
    python examples/batch_mv.py --input_dir ./inputs --depth_dir ./depths --device cuda:1

We recommend diffusers==0.20.2; newer versions need the `timestep_spacing` argument below.
"""
import os
import glob
import time
import argparse

import torch
import numpy as np
from PIL import Image
from tqdm import tqdm
from diffusers import DiffusionPipeline, EulerAncestralDiscreteScheduler, ControlNetModel


def parse_args():
    parser = argparse.ArgumentParser(description="Zero123++ batch inference")
    parser.add_argument("--input_dir", type=str, required=True, help="folder with RGBA or RGB condition images")
    parser.add_argument("--output_dir", type=str, default="outputs")
    parser.add_argument("--model", type=str, default="sudo-ai/zero123plus-v1.2")
    parser.add_argument("--custom_pipeline", type=str, default="sudo-ai/zero123plus-pipeline")
    parser.add_argument("--steps", type=int, default=75, help="28 is enough for most objects, use 75-100 for faces")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--depth_dir", type=str, default=None, help="optional depth maps for the depth ControlNet")
    parser.add_argument("--device", type=str, default="cuda:0", help="GPU to run on")
    parser.add_argument("--xformers", action="store_true", help="use xformers memory efficient attention")
    parser.add_argument("--fp32", action="store_true", help="run in full precision (slow, needs ~2x VRAM)")
    return parser.parse_args()


def load_pipeline(args):
    dtype = torch.float32 if args.fp32 else torch.float16
    pipeline = DiffusionPipeline.from_pretrained(
        args.model,
        custom_pipeline=args.custom_pipeline,
        torch_dtype=dtype,
    )
    # Feel free to tune the scheduler!
    pipeline.scheduler = EulerAncestralDiscreteScheduler.from_config(
        pipeline.scheduler.config, timestep_spacing="trailing"
    )
    if args.depth_dir is not None:
        pipeline.add_controlnet(
            ControlNetModel.from_pretrained("sudo-ai/controlnet-zp11-depth-v1", torch_dtype=dtype),
            conditioning_scale=0.75,
        )
    pipeline.to(args.device)
    if args.xformers:
        pipeline.enable_xformers_memory_efficient_attention()
    pipeline.set_progress_bar_config(disable=True)
    return pipeline


def split_grid(grid: Image.Image, rows: int = 3, cols: int = 2):
    arr = np.asarray(grid)
    h, w = arr.shape[0] // rows, arr.shape[1] // cols
    views = []
    for i in range(rows):
        for j in range(cols):
            views.append(Image.fromarray(arr[i * h:(i + 1) * h, j * w:(j + 1) * w]))
    return views


def list_images(folder):
    files = []
    for ext in ("*.png", "*.jpg", "*.jpeg", "*.webp"):
        files.extend(glob.glob(os.path.join(folder, ext)))
    return sorted(files)


def main():
    args = parse_args()
    os.makedirs(args.output_dir, exist_ok=True)

    if not torch.cuda.is_available():
        raise SystemExit("Zero123++ needs a CUDA GPU, none was found.")
    print(f"Running on {torch.cuda.get_device_name(args.device)}")

    pipeline = load_pipeline(args)
    generator = torch.Generator(device="cuda").manual_seed(args.seed)

    files = list_images(args.input_dir)
    print(f"{len(files)} condition images")
    t0 = time.time()
    for path in tqdm(files):
        name = os.path.splitext(os.path.basename(path))[0]
        cond = Image.open(path)
        kwargs = {}
        if args.depth_dir is not None:
            depth_path = os.path.join(args.depth_dir, f"{name}.png")
            if not os.path.exists(depth_path):
                print(f"skip {name}: no depth map")
                continue
            kwargs["depth_image"] = Image.open(depth_path)

        result = pipeline(cond, num_inference_steps=args.steps, generator=generator, **kwargs).images[0]
        result.save(os.path.join(args.output_dir, f"{name}_grid.png"))

        view_dir = os.path.join(args.output_dir, name)
        os.makedirs(view_dir, exist_ok=True)
        for k, view in enumerate(split_grid(result)):
            view.save(os.path.join(view_dir, f"{k:02d}.png"))

    elapsed = time.time() - t0
    peak = torch.cuda.max_memory_allocated() / 2 ** 30
    print(f"Done in {elapsed:.1f}s ({elapsed / max(len(files), 1):.1f}s/image). Peak GPU memory: {peak:.2f} GiB")


if __name__ == "__main__":
    main()
