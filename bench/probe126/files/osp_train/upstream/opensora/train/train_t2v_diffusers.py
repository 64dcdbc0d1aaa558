#!/usr/bin/env python
# coding=utf-8
# Copyright 2023 The HuggingFace Inc. team. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
"""
A minimal training script for Open-Sora-Plan T2V (video DiT) using accelerate + deepspeed.
"""
import argparse
import gc
import logging
import math
import os
import shutil
import time
from copy import deepcopy
from pathlib import Path

import accelerate
import diffusers
import numpy as np
import torch
import torch.distributed as dist
import transformers
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import DistributedType, ProjectConfiguration, set_seed
from diffusers.optimization import get_scheduler
from diffusers.training_utils import EMAModel, compute_snr
from diffusers.utils import check_min_version, is_wandb_available
from einops import rearrange
from torch.utils.data import DataLoader
from tqdm.auto import tqdm

from opensora.dataset import getdataset
from opensora.models import CausalVAEModelWrapper
from opensora.models.causalvideovae import ae_channel_config, ae_stride_config, ae_wrapper
from opensora.models.diffusion import Diffusion_models, Diffusion_models_class
from opensora.models.diffusion.opensora.modeling_opensora import OpenSoraT2V
from opensora.models.text_encoder import get_text_warpper
from opensora.sample.pipeline_opensora import OpenSoraPipeline
from opensora.utils.dataset_utils import Collate, LengthGroupedSampler
from opensora.utils.ema import EMAModel as OSEMAModel
from opensora.utils.parallel_states import (
    destroy_sequence_parallel_group,
    get_sequence_parallel_state,
    initialize_sequence_parallel_state,
    nccl_info,
)
from opensora.utils.utils import explicit_uniform_sampling, get_common_weights

# Will error if the minimal version of diffusers is not installed. Remove at your own risks.
check_min_version("0.24.0")
logger = get_logger(__name__)


@torch.inference_mode()
def log_validation(args, model, vae, text_encoder, tokenizer, accelerator, weight_dtype, global_step, ema=False):
    validation_prompt = [
        "a cat wearing sunglasses and working as a lifeguard at pool.",
        "A serene underwater scene featuring a sea turtle swimming through a coral reef.",
    ]
    logger.info(f"Running validation....\n")
    model = accelerator.unwrap_model(model)
    scheduler = diffusers.DPMSolverMultistepScheduler()
    opensora_pipeline = OpenSoraPipeline(
        vae=vae, text_encoder=text_encoder, tokenizer=tokenizer, scheduler=scheduler, transformer=model
    ).to(device=accelerator.device)
    videos = []
    for prompt in validation_prompt:
        logger.info("Processing the ({}) prompt".format(prompt))
        video = opensora_pipeline(
            prompt,
            num_frames=args.num_frames,
            height=args.max_height,
            width=args.max_width,
            num_inference_steps=args.num_sampling_steps,
            guidance_scale=args.guidance_scale,
            enable_temporal_attentions=True,
            num_images_per_prompt=1,
            mask_feature=True,
            max_sequence_length=args.model_max_length,
        ).images
        videos.append(video[0])
    videos = torch.stack(videos).numpy()
    videos = rearrange(videos, "b t h w c -> b t c h w")
    for tracker in accelerator.trackers:
        if tracker.name == "tensorboard":
            np_videos = np.stack([np.asarray(vid) for vid in videos])
            tracker.writer.add_video(f"{'ema_' if ema else ''}validation", np_videos, global_step, fps=24)
    del opensora_pipeline
    gc.collect()
    torch.cuda.empty_cache()


class ProgressInfo:
    def __init__(self, global_step, train_loss=0.0):
        self.global_step = global_step
        self.train_loss = train_loss


def broadcast(tensor):
    src = nccl_info.group_id * nccl_info.world_size
    dist.broadcast(tensor, src=src, group=nccl_info.group)


def sync_batch_across_sp_group(x, attn_mask, input_ids, cond_mask):
    """All ranks of one sequence-parallel group must see the same sample: rank 0 of the group broadcasts it."""
    shape = torch.tensor(list(x.shape), dtype=torch.int64, device=torch.cuda.current_device())
    broadcast(shape)
    if nccl_info.rank_in_group != 0:
        x = torch.empty(shape.tolist(), dtype=x.dtype, device=x.device)
    broadcast(x)
    broadcast(attn_mask)
    broadcast(input_ids)
    broadcast(cond_mask)
    return x, attn_mask, input_ids, cond_mask


#################################################################################
#                                  Training Loop                                #
#################################################################################


def main(args):
    logging_dir = Path(args.output_dir, args.logging_dir)

    initialize_sequence_parallel_state(args.sp_size)

    accelerator_project_config = ProjectConfiguration(project_dir=args.output_dir, logging_dir=logging_dir)

    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        mixed_precision=args.mixed_precision,
        log_with=args.report_to,
        project_config=accelerator_project_config,
    )

    if args.report_to == "wandb":
        if not is_wandb_available():
            raise ImportError("Make sure to install wandb if you want to use it for logging during training.")

    # Make one log on every process with the configuration for debugging.
    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        level=logging.INFO,
    )
    logger.info(accelerator.state, main_process_only=False)
    if accelerator.is_local_main_process:
        transformers.utils.logging.set_verbosity_warning()
        diffusers.utils.logging.set_verbosity_info()
    else:
        transformers.utils.logging.set_verbosity_error()
        diffusers.utils.logging.set_verbosity_error()

    # If passed along, set the training seed now.
    if args.seed is not None:
        # every sp group shares one seed so that noise/timesteps agree inside the group
        set_seed(args.seed + (accelerator.process_index // args.sp_size) if args.sp_size > 1 else args.seed)

    # Handle the repository creation
    if accelerator.is_main_process:
        if args.output_dir is not None:
            os.makedirs(args.output_dir, exist_ok=True)

    # For mixed precision training we cast all non-trainable weigths to half-precision
    # as these weights are only used for inference, keeping weights in full precision is not required.
    weight_dtype = torch.float32
    if accelerator.mixed_precision == "fp16":
        weight_dtype = torch.float16
    elif accelerator.mixed_precision == "bf16":
        weight_dtype = torch.bfloat16

    # Create model:
    kwarg = {}
    ae = ae_wrapper[args.ae](args.ae_path, cache_dir=args.cache_dir, **kwarg).eval()
    if args.enable_tiling:
        ae.vae.enable_tiling()
        ae.vae.tile_overlap_factor = args.tile_overlap_factor

    kwarg = {"load_in_8bit": args.enable_8bit_t5, "torch_dtype": weight_dtype, "low_cpu_mem_usage": True}
    text_enc = get_text_warpper(args.text_encoder_name)(args, **kwarg).eval()

    ae_stride_t, ae_stride_h, ae_stride_w = ae_stride_config[args.ae]
    ae.vae_scale_factor = (ae_stride_t, ae_stride_h, ae_stride_w)
    assert ae_stride_h == ae_stride_w, f"Support only ae_stride_h == ae_stride_w now, but found ae_stride_h ({ae_stride_h}), ae_stride_w ({ae_stride_w})"
    args.ae_stride_t, args.ae_stride_h, args.ae_stride_w = ae_stride_t, ae_stride_h, ae_stride_w
    args.ae_stride = args.ae_stride_h
    patch_size = args.model[-3:]
    patch_size_t, patch_size_h, patch_size_w = int(patch_size[0]), int(patch_size[1]), int(patch_size[2])
    args.patch_size = patch_size_h
    args.patch_size_t, args.patch_size_h, args.patch_size_w = patch_size_t, patch_size_h, patch_size_w

    if args.num_frames % 2 == 1:
        args.latent_size_t = latent_size_t = (args.num_frames - 1) // ae_stride_t + 1
    else:
        latent_size_t = args.num_frames // ae_stride_t
    model = Diffusion_models[args.model](
        in_channels=ae_channel_config[args.ae],
        out_channels=ae_channel_config[args.ae],
        sample_size_h=args.max_height // ae_stride_h,
        sample_size_w=args.max_width // ae_stride_w,
        sample_size_t=latent_size_t,
        interpolation_scale_h=args.interpolation_scale_h,
        interpolation_scale_w=args.interpolation_scale_w,
        interpolation_scale_t=args.interpolation_scale_t,
        sparse1d=args.sparse1d,
        sparse_n=args.sparse_n,
        attention_mode=args.attention_mode,
    )
    model.gradient_checkpointing = args.gradient_checkpointing

    # Freeze vae and text encoders.
    ae.vae.requires_grad_(False)
    text_enc.requires_grad_(False)
    # Set model as trainable.
    model.train()

    # Move unet, vae and text_encoder to device and cast to weight_dtype
    ae.vae.to(accelerator.device, dtype=torch.float32 if args.vae_fp32 else weight_dtype)
    text_enc.to(accelerator.device, dtype=weight_dtype)

    # Create EMA for the unet.
    if args.use_ema:
        ema_model = deepcopy(model)
        ema_model = OSEMAModel(
            ema_model.parameters(),
            decay=args.ema_decay,
            update_after_step=args.ema_start_step,
            model_cls=Diffusion_models_class[args.model],
            model_config=ema_model.config,
        )

    # Enable TF32 for faster training on Ampere GPUs,
    # cf https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-devices
    if args.allow_tf32:
        torch.backends.cuda.matmul.allow_tf32 = True

    params_to_optimize = model.parameters()
    # Optimizer creation
    if not (args.optimizer.lower() == "prodigy" or args.optimizer.lower() == "adamw"):
        logger.warning(
            f"Unsupported choice of optimizer: {args.optimizer}.Supported optimizers include [adamW, prodigy]."
            "Defaulting to adamW"
        )
        args.optimizer = "adamw"

    if args.use_8bit_adam and not args.optimizer.lower() == "adamw":
        logger.warning(
            f"use_8bit_adam is ignored when optimizer is not set to 'AdamW'. Optimizer was "
            f"set to {args.optimizer.lower()}"
        )

    if args.optimizer.lower() == "adamw":
        if args.use_8bit_adam:
            try:
                import bitsandbytes as bnb
            except ImportError:
                raise ImportError(
                    "To use 8-bit Adam, please install the bitsandbytes library: `pip install bitsandbytes`."
                )

            optimizer_class = bnb.optim.AdamW8bit
        else:
            optimizer_class = torch.optim.AdamW

        optimizer = optimizer_class(
            params_to_optimize,
            lr=args.learning_rate,
            betas=(args.adam_beta1, args.adam_beta2),
            weight_decay=args.adam_weight_decay,
            eps=args.adam_epsilon,
        )

    logger.info(f"optimizer: {optimizer}")

    # Setup data:
    train_dataset = getdataset(args)
    sampler = (
        LengthGroupedSampler(
            args.train_batch_size,
            world_size=accelerator.num_processes,
            gradient_accumulation_size=args.gradient_accumulation_steps,
            initial_global_step=0,
            lengths=train_dataset.lengths,
            group_data=args.group_data,
        )
        if args.group_data
        else None
    )
    train_dataloader = DataLoader(
        train_dataset,
        shuffle=sampler is None,
        pin_memory=True,
        collate_fn=Collate(args),
        batch_size=args.train_batch_size,
        num_workers=args.dataloader_num_workers,
        sampler=sampler,
        drop_last=True,
        prefetch_factor=4,
    )
    logger.info(f"after train_dataloader")

    # Scheduler and math around the number of training steps.
    overrode_max_train_steps = False
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    if args.max_train_steps is None:
        args.max_train_steps = args.num_train_epochs * num_update_steps_per_epoch
        overrode_max_train_steps = True

    lr_scheduler = get_scheduler(
        args.lr_scheduler,
        optimizer=optimizer,
        num_warmup_steps=args.lr_warmup_steps * accelerator.num_processes,
        num_training_steps=args.max_train_steps * accelerator.num_processes,
    )

    # Prepare everything with our `accelerator`.
    logger.info(f"before accelerator.prepare")
    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler
    )
    logger.info(f"after accelerator.prepare")
    if args.use_ema:
        ema_model.to(accelerator.device)

    # We need to recalculate our total training steps as the size of the training dataloader may have changed.
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    if overrode_max_train_steps:
        args.max_train_steps = args.num_train_epochs * num_update_steps_per_epoch
    # Afterwards we recalculate our number of training epochs
    args.num_train_epochs = math.ceil(args.max_train_steps / num_update_steps_per_epoch)

    # We need to initialize the trackers we use, and also store our configuration.
    if accelerator.is_main_process:
        accelerator.init_trackers(os.path.basename(args.output_dir), config=vars(args))

    # Train!
    total_batch_size = args.train_batch_size * accelerator.num_processes * args.gradient_accumulation_steps
    logger.info("***** Running training *****")
    logger.info(f"  Model = {model}")
    logger.info(f"  Num examples = {len(train_dataset)}")
    logger.info(f"  Num Epochs = {args.num_train_epochs}")
    logger.info(f"  Instantaneous batch size per device = {args.train_batch_size}")
    logger.info(f"  Total train batch size (w. parallel, distributed & accumulation) = {total_batch_size}")
    logger.info(f"  Gradient Accumulation steps = {args.gradient_accumulation_steps}")
    logger.info(f"  Total optimization steps = {args.max_train_steps}")
    global_step = 0
    first_epoch = 0

    progress_bar = tqdm(
        range(0, args.max_train_steps),
        initial=global_step,
        desc="Steps",
        # Only show the progress bar once on each machine.
        disable=not accelerator.is_local_main_process,
    )
    progress_info = ProgressInfo(global_step, train_loss=0.0)

    if args.enable_profiling:
        prof = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
            schedule=torch.profiler.schedule(wait=5, warmup=1, active=1, repeat=1, skip_first=0),
            on_trace_ready=torch.profiler.tensorboard_trace_handler(f"{args.output_dir}/profile"),
            record_shapes=True,
            with_stack=True,
        )
        prof.start()
    else:
        prof = None

    noise_scheduler = diffusers.DDPMScheduler()
    for epoch in range(first_epoch, args.num_train_epochs):
        progress_info.train_loss = 0.0
        t0 = time.time()
        for step, data_item in enumerate(train_dataloader):
            x, attn_mask, input_ids, cond_mask = data_item
            if get_sequence_parallel_state():
                x, attn_mask, input_ids, cond_mask = sync_batch_across_sp_group(x, attn_mask, input_ids, cond_mask)

            x = x.to(accelerator.device, dtype=ae.vae.dtype, non_blocking=True)  # B C T H W
            attn_mask = attn_mask.to(accelerator.device)  # B T+num_images H W
            input_ids = input_ids.to(accelerator.device)  # B 1+num_images L
            cond_mask = cond_mask.to(accelerator.device)  # B 1+num_images L

            with torch.no_grad():
                B, N, L = input_ids.shape  # B 1+num_images L
                input_ids_ = input_ids.reshape(-1, L)
                cond_mask_ = cond_mask.reshape(-1, L)
                cond = text_enc(input_ids_, cond_mask_)  # B 1+num_images L D
                cond = cond.reshape(B, N, L, -1)
                x = ae.encode(x)  # B C T H W

            with accelerator.accumulate(model):
                noise = torch.randn_like(x)
                bsz = x.shape[0]
                timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (bsz,), device=x.device)
                timesteps = timesteps.long()
                noisy_model_input = noise_scheduler.add_noise(x, noise, timesteps)
                model_pred = model(
                    noisy_model_input,
                    timesteps,
                    encoder_hidden_states=cond,
                    attention_mask=attn_mask,
                    encoder_attention_mask=cond_mask,
                    use_image_num=args.use_image_num,
                    return_dict=False,
                )[0]
                if args.snr_gamma is None:
                    loss = torch.nn.functional.mse_loss(model_pred.float(), noise.float(), reduction="mean")
                else:
                    snr = compute_snr(noise_scheduler, timesteps)
                    mse_loss_weights = torch.stack([snr, args.snr_gamma * torch.ones_like(timesteps)], dim=1).min(dim=1)[0] / snr
                    loss = torch.nn.functional.mse_loss(model_pred.float(), noise.float(), reduction="none")
                    loss = loss.mean(dim=list(range(1, len(loss.shape)))) * mse_loss_weights
                    loss = loss.mean()

                avg_loss = accelerator.gather(loss.repeat(args.train_batch_size)).mean()
                progress_info.train_loss += avg_loss.detach().item() / args.gradient_accumulation_steps

                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    params_to_clip = model.parameters()
                    accelerator.clip_grad_norm_(params_to_clip, args.max_grad_norm)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()

            if accelerator.sync_gradients:
                if args.use_ema:
                    ema_model.step(model.parameters())
                progress_bar.update(1)
                progress_info.global_step += 1
                accelerator.log({"train_loss": progress_info.train_loss}, step=progress_info.global_step)
                if progress_info.global_step % 50 == 0 and accelerator.is_main_process:
                    accelerator.print(
                        f"step {progress_info.global_step} | {(time.time() - t0) / 50:.2f}s/it | "
                        f"max mem {torch.cuda.max_memory_allocated() / 1024**3:.1f} GB"
                    )
                    t0 = time.time()
                progress_info.train_loss = 0.0

                if progress_info.global_step % args.checkpointing_steps == 0:
                    save_path = os.path.join(args.output_dir, f"checkpoint-{progress_info.global_step}")
                    accelerator.save_state(save_path)
                    logger.info(f"Saved state to {save_path}")

                if args.validation_steps and progress_info.global_step % args.validation_steps == 0:
                    if accelerator.is_main_process:
                        log_validation(args, model, ae, text_enc.text_enc, train_dataset.tokenizer, accelerator, weight_dtype, progress_info.global_step)

            if prof is not None:
                prof.step()
            if progress_info.global_step >= args.max_train_steps:
                break

    accelerator.wait_for_everyone()
    accelerator.end_training()
    if get_sequence_parallel_state():
        destroy_sequence_parallel_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()

    # dataset & dataloader
    parser.add_argument("--dataset", type=str, required=True)
    parser.add_argument("--data", type=str, required="")
    parser.add_argument("--sample_rate", type=int, default=1)
    parser.add_argument("--train_fps", type=int, default=24)
    parser.add_argument("--num_frames", type=int, default=65)
    parser.add_argument("--max_height", type=int, default=320)
    parser.add_argument("--max_width", type=int, default=240)
    parser.add_argument("--use_image_num", type=int, default=0)
    parser.add_argument("--model_max_length", type=int, default=512)
    parser.add_argument("--group_data", action="store_true")
    parser.add_argument("--dataloader_num_workers", type=int, default=10)
    parser.add_argument("--train_batch_size", type=int, default=16)

    # text encoder & vae & diffusion model
    parser.add_argument("--model", type=str, choices=list(Diffusion_models.keys()), default="OpenSoraT2V-ROPE-L/122")
    parser.add_argument("--enable_8bit_t5", action="store_true")
    parser.add_argument("--tile_overlap_factor", type=float, default=0.125)
    parser.add_argument("--enable_tiling", action="store_true")
    parser.add_argument("--interpolation_scale_h", type=float, default=1.0)
    parser.add_argument("--interpolation_scale_w", type=float, default=1.0)
    parser.add_argument("--interpolation_scale_t", type=float, default=1.0)
    parser.add_argument("--ae", type=str, default="WFVAEModel_D8_4x8x8")
    parser.add_argument("--ae_path", type=str, default="LanguageBind/Open-Sora-Plan-v1.3.0")
    parser.add_argument("--vae_fp32", action="store_true")
    parser.add_argument("--text_encoder_name", type=str, default="google/mt5-xxl")
    parser.add_argument("--cache_dir", type=str, default="./cache_dir")
    parser.add_argument("--pretrained", type=str, default=None)
    parser.add_argument("--sparse1d", action="store_true")
    parser.add_argument("--sparse_n", type=int, default=2)
    parser.add_argument("--gradient_checkpointing", action="store_true")
    parser.add_argument(
        "--attention_mode", type=str, choices=["xformers", "math", "flash"], default="xformers",
        help="SDPA backend; 'flash' requires an Ampere or newer GPU",
    )

    # validation & logs
    parser.add_argument("--num_sampling_steps", type=int, default=20)
    parser.add_argument("--guidance_scale", type=float, default=4.5)
    parser.add_argument("--validation_steps", type=int, default=0)
    parser.add_argument("--output_dir", type=str, default=None)
    parser.add_argument("--checkpointing_steps", type=int, default=500)
    parser.add_argument("--logging_dir", type=str, default="logs")
    parser.add_argument("--report_to", type=str, default="tensorboard")
    parser.add_argument("--enable_profiling", action="store_true")

    # optimizer & scheduler
    parser.add_argument("--num_train_epochs", type=int, default=100)
    parser.add_argument("--max_train_steps", type=int, default=None)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--optimizer", type=str, default="adamW")
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--lr_warmup_steps", type=int, default=0)
    parser.add_argument("--use_8bit_adam", action="store_true")
    parser.add_argument("--adam_beta1", type=float, default=0.9)
    parser.add_argument("--adam_beta2", type=float, default=0.999)
    parser.add_argument("--prodigy_decouple", type=bool, default=True)
    parser.add_argument("--adam_weight_decay", type=float, default=1e-02)
    parser.add_argument("--adam_epsilon", type=float, default=1e-15)
    parser.add_argument("--prodigy_use_bias_correction", type=bool, default=True)
    parser.add_argument("--prodigy_safeguard_warmup", type=bool, default=True)
    parser.add_argument("--prodigy_beta3", type=float, default=None)
    parser.add_argument("--lr_scheduler", type=str, default="constant")
    parser.add_argument("--allow_tf32", action="store_true")
    parser.add_argument("--max_grad_norm", default=1.0, type=float)
    parser.add_argument("--use_ema", action="store_true")
    parser.add_argument("--ema_decay", type=float, default=0.9999)
    parser.add_argument("--ema_start_step", type=int, default=0)
    parser.add_argument("--snr_gamma", type=float, default=None)
    parser.add_argument("--mixed_precision", type=str, default=None, choices=["no", "fp16", "bf16"])
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--sp_size", type=int, default=1, help="For sequence parallel")

    args = parser.parse_args()
    main(args)
