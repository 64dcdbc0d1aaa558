"""Train a conditional video diffusion model for future-frame prediction.

Launch with accelerate, e.g.

    accelerate launch --config_file configs/accelerate/4gpu.yaml train.py \
        --dataset kth --num_cond_frames 10 --num_pred_frames 10 --mixed_precision fp16

Single GPU debugging works with plain `python train.py ...`.
"""
import argparse
import copy
import logging
import math
import os
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import ProjectConfiguration, set_seed
from einops import rearrange
from torch.utils.data import DataLoader
from tqdm.auto import tqdm

from data import build_video_dataset
from diffusion import GaussianDiffusion, cosine_beta_schedule
from models.st_unet import SpaceTimeUnet
from utils.ema import EMA
from utils.video_io import save_video_grid

logger = get_logger(__name__, log_level="INFO")


def parse_args():
    parser = argparse.ArgumentParser(description="Video diffusion predictor")
    parser.add_argument("--dataset", type=str, default="kth", choices=["kth", "bair", "cityscapes", "smmnist"])
    parser.add_argument("--data_root", type=str, default="./datasets")
    parser.add_argument("--output_dir", type=str, default="./outputs/vdp_kth")
    parser.add_argument("--image_size", type=int, default=64)
    parser.add_argument("--num_cond_frames", type=int, default=10)
    parser.add_argument("--num_pred_frames", type=int, default=10)
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--dim_mults", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--timesteps", type=int, default=1000)
    parser.add_argument("--sampling_timesteps", type=int, default=100)
    parser.add_argument("--train_batch_size", type=int, default=8)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--adam_weight_decay", type=float, default=0.0)
    parser.add_argument("--max_train_steps", type=int, default=300_000)
    parser.add_argument("--lr_warmup_steps", type=int, default=1000)
    parser.add_argument("--ema_decay", type=float, default=0.995)
    parser.add_argument("--save_and_sample_every", type=int, default=5000)
    parser.add_argument("--num_workers", type=int, default=8)
    parser.add_argument("--mixed_precision", type=str, default="fp16", choices=["no", "fp16", "bf16"])
    parser.add_argument("--allow_tf32", action="store_true")
    parser.add_argument("--use_flash_sdp", action="store_true",
                        help="force the FlashAttention SDPA kernel (needs sm80+)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the UNet")
    parser.add_argument("--resume_from_checkpoint", type=str, default=None)
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def pick_autocast_dtype(requested):
    """bf16 only on Ampere or newer; older cards fall back to fp16."""
    if requested == "bf16" and torch.cuda.get_device_capability()[0] < 8:
        logger.warning("bf16 requested but GPU has compute capability < 8.0, using fp16 instead")
        return "fp16"
    return requested


def cycle(dl):
    while True:
        for data in dl:
            yield data


def main():
    args = parse_args()
    args.mixed_precision = pick_autocast_dtype(args.mixed_precision)

    project_config = ProjectConfiguration(project_dir=args.output_dir, logging_dir=os.path.join(args.output_dir, "logs"))
    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        mixed_precision=args.mixed_precision,
        log_with="tensorboard",
        project_config=project_config,
    )

    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        level=logging.INFO,
    )
    logger.info(accelerator.state, main_process_only=False)

    if args.seed is not None:
        set_seed(args.seed)
        seed_everything(args.seed + accelerator.process_index)

    if args.allow_tf32:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

    if accelerator.is_main_process:
        os.makedirs(args.output_dir, exist_ok=True)
        accelerator.init_trackers("vdp", config=vars(args))

    # ------------------------------------------------------------------ data
    train_set = build_video_dataset(args.dataset, args.data_root, split="train", image_size=args.image_size,
                                    num_frames=args.num_cond_frames + args.num_pred_frames)
    val_set = build_video_dataset(args.dataset, args.data_root, split="test", image_size=args.image_size,
                                  num_frames=args.num_cond_frames + args.num_pred_frames)
    train_dl = DataLoader(train_set, batch_size=args.train_batch_size, shuffle=True, drop_last=True,
                          num_workers=args.num_workers, pin_memory=True, persistent_workers=True)
    val_dl = DataLoader(val_set, batch_size=4, shuffle=False, num_workers=2, pin_memory=torch.cuda.is_available())

    # ----------------------------------------------------------------- model
    unet = SpaceTimeUnet(
        dim=args.dim,
        dim_mults=tuple(args.dim_mults),
        channels=train_set.channels,
        cond_frames=args.num_cond_frames,
        use_sdpa=True,
    )
    diffusion = GaussianDiffusion(
        unet,
        image_size=args.image_size,
        num_frames=args.num_pred_frames,
        timesteps=args.timesteps,
        sampling_timesteps=args.sampling_timesteps,
        betas=cosine_beta_schedule(args.timesteps),
        loss_type="l2",
    )

    # 24GB consumer cards cannot hold the 128px model with batch 8: halve and accumulate
    if torch.cuda.is_available():
        total_mem = torch.cuda.get_device_properties(accelerator.local_process_index).total_memory
        if total_mem < 30 * 1024 ** 3 and args.image_size >= 128:
            args.train_batch_size //= 2
            args.gradient_accumulation_steps *= 2
            logger.info(f"GPU has {total_mem / 1024 ** 3:.0f}GB, using batch {args.train_batch_size} x {args.gradient_accumulation_steps}")

    optimizer = torch.optim.AdamW(
        diffusion.parameters(),
        lr=args.learning_rate,
        betas=(0.9, 0.99),
        weight_decay=args.adam_weight_decay,
        fused=True,
    )
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / args.lr_warmup_steps))

    if args.compile:
        diffusion.model = torch.compile(diffusion.model)

    diffusion, optimizer, train_dl, lr_scheduler = accelerator.prepare(diffusion, optimizer, train_dl, lr_scheduler)

    ema = None
    if accelerator.is_main_process:
        ema = EMA(accelerator.unwrap_model(diffusion), beta=args.ema_decay, update_every=10)
        ema.to(accelerator.device)

    global_step = 0
    if args.resume_from_checkpoint:
        path = args.resume_from_checkpoint
        accelerator.print(f"Resuming from checkpoint {path}")
        accelerator.load_state(path)
        global_step = int(Path(path).name.split("-")[-1])
        if ema is not None and os.path.exists(os.path.join(path, "ema.pt")):
            ema.load_state_dict(torch.load(os.path.join(path, "ema.pt"), map_location="cpu"))

    # ------------------------------------------------------------- training
    dl = cycle(train_dl)
    progress_bar = tqdm(range(global_step, args.max_train_steps), disable=not accelerator.is_local_main_process)
    progress_bar.set_description("Steps")

    sdp_ctx = torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, enable_mem_efficient=False) \
        if args.use_flash_sdp else torch.backends.cuda.sdp_kernel()

    while global_step < args.max_train_steps:
        diffusion.train()
        with accelerator.accumulate(diffusion):
            videos = next(dl)
            videos = videos.to(accelerator.device, non_blocking=True)
            cond, target = videos[:, :, :args.num_cond_frames], videos[:, :, args.num_cond_frames:]
            with sdp_ctx:
                loss = diffusion(target, cond=cond)
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(diffusion.parameters(), 1.0)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad(set_to_none=True)

        if accelerator.sync_gradients:
            progress_bar.update(1)
            global_step += 1
            if ema is not None:
                ema.update()

            logs = {"loss": loss.detach().item(), "lr": lr_scheduler.get_last_lr()[0]}
            progress_bar.set_postfix(**logs)
            accelerator.log(logs, step=global_step)

            if global_step % args.save_and_sample_every == 0:
                accelerator.wait_for_everyone()
                if accelerator.is_main_process:
                    save_path = os.path.join(args.output_dir, f"checkpoint-{global_step}")
                    accelerator.save_state(save_path)
                    torch.save(ema.state_dict(), os.path.join(save_path, "ema.pt"))

                    ema.ema_model.eval()
                    val_videos = next(iter(val_dl)).to(accelerator.device)
                    val_cond = val_videos[:, :, :args.num_cond_frames]
                    with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
                        samples = ema.ema_model.sample(cond=val_cond, batch_size=val_cond.shape[0])
                    grid = torch.cat([val_videos, torch.cat([val_cond, samples], dim=2)], dim=0)
                    save_video_grid(grid.float().cpu(), os.path.join(args.output_dir, f"sample-{global_step}.gif"))
                    peak = torch.cuda.max_memory_allocated() / 1024 ** 3
                    logger.info(f"step {global_step}: saved {save_path}, peak mem {peak:.1f}GB")

    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
