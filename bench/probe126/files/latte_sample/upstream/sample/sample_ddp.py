# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.

# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.

"""
Samples a large number of videos from a pre-trained Latte model using DDP.
Subsequently saves the videos (mp4) to a folder for FVD evaluation.

For a simple single-GPU/CPU sampling script, see sample.py.
"""
import argparse
import math
import os
import sys

import imageio
import numpy as np
import torch
import torch.distributed as dist
from diffusers.models import AutoencoderKL
from einops import rearrange
from omegaconf import OmegaConf
from tqdm import tqdm

sys.path.append(os.path.split(sys.path[0])[0])
from diffusion import create_diffusion
from download import find_model
from models import get_models
from utils import save_video_grid


def main(args):
    """
    Run sampling.
    """
    torch.backends.cuda.matmul.allow_tf32 = True  # True: fast but may lead to some small numerical differences
    assert torch.cuda.is_available(), "Sampling with DDP requires at least one GPU. sample.py supports CPU-only usage"
    torch.set_grad_enabled(False)

    # Setup DDP:
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = rank % torch.cuda.device_count()
    seed = args.global_seed * dist.get_world_size() + rank
    torch.manual_seed(seed)
    torch.cuda.set_device(device)
    print(f"Starting rank={rank}, seed={seed}, world_size={dist.get_world_size()}.")

    if args.ckpt is None:
        assert args.model == "Latte-XL/2", "Only Latte-XL/2 models are available for auto-download."
        assert args.image_size in [256, 512]
        assert args.num_classes == 1000

    # Load model:
    latent_size = args.image_size // 8
    args.latent_size = latent_size
    model = get_models(args).to(device)

    if args.use_compile:
        model = torch.compile(model, mode="max-autotune")

    # a pre-trained model or load a custom Latte checkpoint from train.py:
    ckpt_path = args.ckpt
    state_dict = find_model(ckpt_path)
    model.load_state_dict(state_dict)
    model.eval()  # important!
    diffusion = create_diffusion(str(args.num_sampling_steps))
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_path, subfolder="vae").to(device)

    if args.use_fp16:
        print("WARNING: using half percision for inferencing!")
        vae.to(dtype=torch.float16)
        model.to(dtype=torch.float16)

    # Create folder to save samples:
    model_string_name = args.model.replace("/", "-")
    ckpt_string_name = os.path.basename(args.ckpt).replace(".pt", "") if args.ckpt else "pretrained"
    folder_name = (
        f"{model_string_name}-{ckpt_string_name}-size-{args.image_size}-vae-{args.vae}-"
        f"cfg-{args.cfg_scale}-seed-{args.global_seed}"
    )
    sample_folder_dir = f"{args.save_video_path}/{folder_name}"
    if rank == 0:
        os.makedirs(sample_folder_dir, exist_ok=True)
        print(f"Saving .mp4 samples at {sample_folder_dir}")
    dist.barrier()

    # Figure out how many samples we need to generate on each GPU and how many iterations we need to run:
    n = args.per_proc_batch_size
    global_batch_size = n * dist.get_world_size()
    # To make things evenly-divisible, we'll sample a bit more than we need and then discard the extra samples:
    total_samples = int(math.ceil(args.num_fvd_samples / global_batch_size) * global_batch_size)
    if rank == 0:
        print(f"Total number of videos that will be sampled: {total_samples}")
    assert total_samples % dist.get_world_size() == 0, "total_samples must be divisible by world_size"
    samples_needed_this_gpu = int(total_samples // dist.get_world_size())
    assert samples_needed_this_gpu % n == 0, "samples_needed_this_gpu must be divisible by the per-GPU batch size"
    iterations = int(samples_needed_this_gpu // n)
    pbar = range(iterations)
    pbar = tqdm(pbar) if rank == 0 else pbar
    total = 0
    for _ in pbar:
        # Sample inputs:
        if args.use_fp16:
            z = torch.randn(n, args.num_frames, 4, latent_size, latent_size, dtype=torch.float16, device=device)
        else:
            z = torch.randn(n, args.num_frames, 4, latent_size, latent_size, device=device)

        # Setup classifier-free guidance:
        if args.extras == 2:
            y = torch.randint(0, args.num_classes, (n,), device=device)
        else:
            y = None

        if args.cfg_scale > 1.0:
            z = torch.cat([z, z], 0)
            y_null = torch.tensor([101] * n, device=device)
            y = torch.cat([y, y_null], 0)
            model_kwargs = dict(y=y, cfg_scale=args.cfg_scale, use_fp16=args.use_fp16)
            sample_fn = model.forward_with_cfg
        else:
            model_kwargs = dict(y=y, use_fp16=args.use_fp16)
            sample_fn = model.forward

        # Sample images:
        if args.sample_method == "ddim":
            samples = diffusion.ddim_sample_loop(
                sample_fn, z.shape, z, clip_denoised=False, model_kwargs=model_kwargs, progress=False, device=device
            )
        elif args.sample_method == "ddpm":
            samples = diffusion.p_sample_loop(
                sample_fn, z.shape, z, clip_denoised=False, model_kwargs=model_kwargs, progress=False, device=device
            )

        if args.cfg_scale > 1.0:
            samples, _ = samples.chunk(2, dim=0)  # Remove null class samples

        if args.use_fp16:
            samples = samples.to(dtype=torch.float16)

        b, f, c, h, w = samples.shape
        samples = rearrange(samples, "b f c h w -> (b f) c h w")
        samples = vae.decode(samples / 0.18215).sample
        samples = rearrange(samples, "(b f) c h w -> b f c h w", b=b)
        # Save samples to disk as individual .png files
        for i, sample in enumerate(samples):
            sample = ((sample * 0.5 + 0.5) * 255).add_(0.5).clamp_(0, 255).to(dtype=torch.uint8).cpu().permute(0, 2, 3, 1).contiguous()
            index = i * dist.get_world_size() + rank + total
            imageio.mimwrite(f"{sample_folder_dir}/{index:04d}.mp4", sample, fps=8, quality=5)
        total += global_batch_size

    # Make sure all processes have finished saving their samples before attempting to convert to .npz
    dist.barrier()
    if rank == 0:
        print("Done.")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", type=str, default="./configs/ffs/ffs_sample.yaml")
    parser.add_argument("--ckpt", type=str, default="")
    parser.add_argument("--save_video_path", type=str, default="./sample_videos/")
    args = parser.parse_args()
    omega_conf = OmegaConf.load(args.config)
    omega_conf.ckpt = args.ckpt
    omega_conf.save_video_path = args.save_video_path
    main(omega_conf)
