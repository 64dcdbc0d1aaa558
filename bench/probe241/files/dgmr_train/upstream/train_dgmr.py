#!/usr/bin/env python
"""Train DGMR (Deep Generative Model of Rainfall, Ravuri et al. 2021) in plain PyTorch.

    # single GPU
    python train_dgmr.py --config configs/dgmr_radar_uk.yaml
    # one node, 8 GPUs
    torchrun --nproc_per_node 8 train_dgmr.py --config configs/dgmr_radar_uk.yaml --amp

The generator is updated once for every two discriminator updates, as in the paper.
"""
import argparse
import datetime
import logging
import math
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
import yaml
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from dgmr import DGMR, Generator, Discriminator, LatentConditioningStack, ContextConditioningStack, Sampler
from dgmr.losses import loss_hinge_disc, loss_hinge_gen, grid_cell_regularizer
from dgmr.data import RadarSequenceDataset
from dgmr.utils import AverageMeter, save_checkpoint, load_checkpoint

logger = logging.getLogger("dgmr")


def parse_args():
    p = argparse.ArgumentParser(description="DGMR training")
    p.add_argument("--config", required=True, type=str)
    p.add_argument("--output", default="runs/dgmr", type=str)
    p.add_argument("--resume", default=None, type=str, help="checkpoint to resume from")
    p.add_argument("--amp", action="store_true", help="use torch.cuda.amp mixed precision")
    p.add_argument("--seed", default=42, type=int)
    p.add_argument("--local_rank", default=int(os.environ.get("LOCAL_RANK", 0)), type=int)
    p.add_argument("--log-every", default=50, type=int)
    return p.parse_args()


def setup_distributed(args, dist_cfg):
    args.world_size = int(os.environ.get("WORLD_SIZE", 1))
    args.distributed = args.world_size > 1
    if args.distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend=dist_cfg.get("backend", "nccl"), init_method="env://",
                                timeout=datetime.timedelta(minutes=dist_cfg.get("timeout_min", 30)))
        args.rank = dist.get_rank()
    else:
        args.rank = 0
    args.device = torch.device("cuda", args.local_rank)
    return args


def seed_all(seed, rank):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def build_models(cfg, device):
    m = cfg["model"]
    generator = Generator(
        conditioning_stack=ContextConditioningStack(
            input_channels=m["input_channels"],
            output_channels=m["output_shape"] * 4,  # 4 scales
            num_context_steps=m["forecast_steps_in"],
            conv_type=m.get("conv_type", "standard"),
        ),
        latent_stack=LatentConditioningStack(
            shape=(8 * m["input_channels"], m["output_shape"] // 32, m["output_shape"] // 32),
            output_channels=m["latent_channels"],
            use_attention=True,
        ),
        sampler=Sampler(
            forecast_steps=m["forecast_steps_out"],
            latent_channels=m["latent_channels"],
            context_channels=m["context_channels"],
        ),
    )
    discriminator = Discriminator(
        input_channels=m["input_channels"],
        num_spatial_frames=8,
        conv_type=m.get("conv_type", "standard"),
    )
    return generator.to(device), discriminator.to(device)


def main():
    args = parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    args = setup_distributed(args, cfg.get("dist", {}))
    logging.basicConfig(level=logging.INFO if args.rank == 0 else logging.WARN,
                        format="%(asctime)s %(levelname)s %(message)s")
    seed_all(args.seed, args.rank)
    torch.backends.cudnn.benchmark = True

    os.makedirs(args.output, exist_ok=True)
    writer = SummaryWriter(args.output) if args.rank == 0 else None

    # ---------------- data
    train_set = RadarSequenceDataset(cfg["data"]["root"], split="train",
                                     in_steps=cfg["model"]["forecast_steps_in"],
                                     out_steps=cfg["model"]["forecast_steps_out"],
                                     crop=cfg["data"]["crop_size"])
    sampler = DistributedSampler(train_set, shuffle=True) if args.distributed else None
    loader = DataLoader(train_set,
                        batch_size=cfg["train"]["batch_size"],
                        shuffle=sampler is None,
                        sampler=sampler,
                        num_workers=cfg["data"]["num_workers"],
                        pin_memory=True,
                        drop_last=True)

    # ---------------- models
    generator, discriminator = build_models(cfg, args.device)
    if args.distributed:
        generator = torch.nn.SyncBatchNorm.convert_sync_batchnorm(generator)
        generator = DDP(generator, device_ids=[args.local_rank], output_device=args.local_rank)
        discriminator = DDP(discriminator, device_ids=[args.local_rank], output_device=args.local_rank)

    tcfg = cfg["train"]
    gen_opt = torch.optim.Adam(generator.parameters(), lr=tcfg["gen_lr"], betas=(0.0, 0.999))
    disc_opt = torch.optim.Adam(discriminator.parameters(), lr=tcfg["disc_lr"], betas=(0.0, 0.999))

    # two scalers: the generator and discriminator losses live on very different scales
    gen_scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    disc_scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    start_epoch, global_step = 0, 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f"cuda:{args.local_rank}")
        generator.load_state_dict(ckpt["generator"])
        discriminator.load_state_dict(ckpt["discriminator"])
        gen_opt.load_state_dict(ckpt["gen_opt"])
        disc_opt.load_state_dict(ckpt["disc_opt"])
        gen_scaler.load_state_dict(ckpt["gen_scaler"])
        disc_scaler.load_state_dict(ckpt["disc_scaler"])
        start_epoch, global_step = ckpt["epoch"] + 1, ckpt["step"]
        logger.info("resumed from %s (epoch %d)", args.resume, start_epoch)

    num_samples = tcfg.get("num_generator_samples", 6)
    grid_lambda = tcfg.get("grid_lambda", 20.0)
    meters = {k: AverageMeter() for k in ("d_loss", "g_loss", "grid_reg", "step_time")}

    for epoch in range(start_epoch, tcfg["epochs"]):
        if sampler is not None:
            sampler.set_epoch(epoch)
        generator.train()
        discriminator.train()
        end = time.time()
        for images, future_images in loader:
            images = images.cuda(non_blocking=True)
            future_images = future_images.cuda(non_blocking=True)

            # ---------------- discriminator: two steps per generator step
            for _ in range(2):
                disc_opt.zero_grad(set_to_none=True)
                with torch.cuda.amp.autocast(enabled=args.amp):
                    with torch.no_grad():
                        predictions = generator(images)
                    generated_sequence = torch.cat([images, predictions], dim=1)
                    real_sequence = torch.cat([images, future_images], dim=1)
                    concatenated_inputs = torch.cat([real_sequence, generated_sequence], dim=0)
                    concatenated_outputs = discriminator(concatenated_inputs)
                    score_real, score_generated = torch.split(concatenated_outputs, images.shape[0], dim=0)
                    discriminator_loss = loss_hinge_disc(score_generated, score_real)
                disc_scaler.scale(discriminator_loss).backward()
                disc_scaler.step(disc_opt)
                disc_scaler.update()

            # ---------------- generator
            gen_opt.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=args.amp):  # 6 samples -> biggest activation footprint
                predictions = [generator(images) for _ in range(num_samples)]
                grid_cell_reg = grid_cell_regularizer(torch.stack(predictions, dim=0), future_images)
                generated_sequence = [torch.cat([images, x], dim=1) for x in predictions]
                real_sequence = torch.cat([images, future_images], dim=1)
                generated_scores = []
                for g_seq in generated_sequence:
                    concatenated_inputs = torch.cat([real_sequence, g_seq], dim=0)
                    concatenated_outputs = discriminator(concatenated_inputs)
                    score_real, score_generated = torch.split(concatenated_outputs, images.shape[0], dim=0)
                    generated_scores.append(score_generated)
                generator_disc_loss = loss_hinge_gen(torch.cat(generated_scores, dim=0))
                generator_loss = generator_disc_loss + grid_lambda * grid_cell_reg
            gen_scaler.scale(generator_loss).backward()
            gen_scaler.unscale_(gen_opt)
            torch.nn.utils.clip_grad_norm_(generator.parameters(), tcfg.get("clip_grad", 1.0))
            gen_scaler.step(gen_opt)
            gen_scaler.update()

            torch.cuda.synchronize()
            meters["step_time"].update(time.time() - end)
            end = time.time()
            meters["d_loss"].update(discriminator_loss.item())
            meters["g_loss"].update(generator_disc_loss.item())
            meters["grid_reg"].update(grid_cell_reg.item())
            global_step += 1

            if global_step % args.log_every == 0 and args.rank == 0:
                mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3
                logger.info("epoch %d step %d | d %.4f g %.4f grid %.4f | %.2fs/it | max mem %.1f GB",
                            epoch, global_step, meters["d_loss"].avg, meters["g_loss"].avg,
                            meters["grid_reg"].avg, meters["step_time"].avg, mem_gb)
                for k, m in meters.items():
                    writer.add_scalar(f"train/{k}", m.avg, global_step)
                    m.reset()

        if args.rank == 0:
            save_checkpoint(os.path.join(args.output, f"dgmr_epoch{epoch:03d}.pth"), {
                "generator": generator.state_dict(),
                "discriminator": discriminator.state_dict(),
                "gen_opt": gen_opt.state_dict(),
                "disc_opt": disc_opt.state_dict(),
                "gen_scaler": gen_scaler.state_dict(),
                "disc_scaler": disc_scaler.state_dict(),
                "epoch": epoch,
                "step": global_step,
            })
        # the grid-cell regulariser keeps 6 full-resolution samples alive; release them between epochs
        torch.cuda.empty_cache()

    if args.distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
