#!/usr/bin/env python
# coding=utf-8
"""Script to fine-tune Stable Diffusion for InstructPix2Pix."""
import argparse
import logging
import math
import os
from contextlib import nullcontext

import accelerate
import numpy as np
import PIL
import requests
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import ProjectConfiguration, set_seed
from datasets import load_dataset
from torchvision import transforms
from tqdm.auto import tqdm
from transformers import CLIPTextModel, CLIPTokenizer

from diffusers import AutoencoderKL, DDPMScheduler, StableDiffusionInstructPix2PixPipeline, UNet2DConditionModel
from diffusers.optimization import get_scheduler
from diffusers.training_utils import EMAModel
from diffusers.utils.import_utils import is_xformers_available

logger = get_logger(__name__, log_level="INFO")
WANDB_TABLE_COL_NAMES = ["original_image", "edited_image", "edit_prompt"]


def log_validation(pipeline, args, accelerator, generator):
    logger.info(f"Running validation... \n Generating {args.num_validation_images} images with prompt:"
                f" {args.validation_prompt}.")
    pipeline = pipeline.to(accelerator.device)
    pipeline.set_progress_bar_config(disable=True)
    original_image = PIL.Image.open(requests.get(args.val_image_url, stream=True).raw).convert("RGB")
    if torch.backends.mps.is_available():
        autocast_ctx = nullcontext()
    else:
        autocast_ctx = torch.autocast(accelerator.device.type)
    edited_images = []
    with autocast_ctx:
        for _ in range(args.num_validation_images):
            edited_images.append(pipeline(args.validation_prompt, image=original_image, num_inference_steps=20,
                                          image_guidance_scale=1.5, guidance_scale=7,
                                          generator=generator).images[0])
    return original_image, edited_images


def parse_args():
    parser = argparse.ArgumentParser(description="Simple example of a training script for InstructPix2Pix.")
    parser.add_argument("--pretrained_model_name_or_path", type=str, required=True)
    parser.add_argument("--dataset_name", type=str, default="fusing/instructpix2pix-1000-samples")
    parser.add_argument("--original_image_column", type=str, default="input_image")
    parser.add_argument("--edited_image_column", type=str, default="edited_image")
    parser.add_argument("--edit_prompt_column", type=str, default="edit_prompt")
    parser.add_argument("--val_image_url", type=str, default=None)
    parser.add_argument("--validation_prompt", type=str, default=None)
    parser.add_argument("--num_validation_images", type=int, default=4)
    parser.add_argument("--validation_epochs", type=int, default=1)
    parser.add_argument("--output_dir", type=str, default="instruct-pix2pix-model")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--resolution", type=int, default=256)
    parser.add_argument("--train_batch_size", type=int, default=16)
    parser.add_argument("--num_train_epochs", type=int, default=100)
    parser.add_argument("--max_train_steps", type=int, default=None)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--gradient_checkpointing", action="store_true")
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--conditioning_dropout_prob", type=float, default=None)
    parser.add_argument("--use_8bit_adam", action="store_true")
    parser.add_argument("--allow_tf32", action="store_true")
    parser.add_argument("--use_ema", action="store_true")
    parser.add_argument("--mixed_precision", type=str, default=None, choices=["no", "fp16", "bf16"])
    parser.add_argument("--enable_xformers_memory_efficient_attention", action="store_true")
    return parser.parse_args()


def convert_to_np(image, resolution):
    image = image.convert("RGB").resize((resolution, resolution))
    return np.array(image).transpose(2, 0, 1)


def main():
    args = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps,
                              mixed_precision=args.mixed_precision, log_with="wandb",
                              project_config=ProjectConfiguration(project_dir=args.output_dir))
    generator = torch.Generator(device=accelerator.device).manual_seed(args.seed or 0)
    logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
    if args.seed is not None:
        set_seed(args.seed)

    noise_scheduler = DDPMScheduler.from_pretrained(args.pretrained_model_name_or_path, subfolder="scheduler")
    tokenizer = CLIPTokenizer.from_pretrained(args.pretrained_model_name_or_path, subfolder="tokenizer")
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder")
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_name_or_path, subfolder="vae")
    unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")

    # InstructPix2Pix: 8 input channels (noisy latents + encoded original image)
    in_channels = 8
    out_channels = unet.conv_in.out_channels
    unet.register_to_config(in_channels=in_channels)
    with torch.no_grad():
        new_conv_in = nn.Conv2d(in_channels, out_channels, unet.conv_in.kernel_size, unet.conv_in.stride,
                                unet.conv_in.padding)
        new_conv_in.weight.zero_()
        new_conv_in.weight[:, :4, :, :].copy_(unet.conv_in.weight)
        unet.conv_in = new_conv_in

    vae.requires_grad_(False)
    text_encoder.requires_grad_(False)
    if args.use_ema:
        ema_unet = EMAModel(unet.parameters(), model_cls=UNet2DConditionModel, model_config=unet.config)

    if args.enable_xformers_memory_efficient_attention:
        if is_xformers_available():
            unet.enable_xformers_memory_efficient_attention()
        else:
            raise ValueError("xformers is not available. Make sure it is installed correctly")
    if args.gradient_checkpointing:
        unet.enable_gradient_checkpointing()
    if args.allow_tf32:
        torch.backends.cuda.matmul.allow_tf32 = True

    if args.use_8bit_adam:
        import bitsandbytes as bnb

        optimizer_cls = bnb.optim.AdamW8bit
    else:
        optimizer_cls = torch.optim.AdamW
    optimizer = optimizer_cls(unet.parameters(), lr=args.learning_rate, betas=(0.9, 0.999), weight_decay=1e-2)

    dataset = load_dataset(args.dataset_name)
    train_transforms = transforms.Compose([
        transforms.CenterCrop(args.resolution),
        transforms.RandomHorizontalFlip(),
    ])

    def preprocess_images(examples):
        original_images = np.concatenate([convert_to_np(image, args.resolution)
                                          for image in examples[args.original_image_column]])
        edited_images = np.concatenate([convert_to_np(image, args.resolution)
                                        for image in examples[args.edited_image_column]])
        images = np.concatenate([original_images, edited_images])
        images = torch.tensor(images)
        images = 2 * (images / 255) - 1
        return train_transforms(images)

    def preprocess_train(examples):
        preprocessed_images = preprocess_images(examples)
        original_images, edited_images = preprocessed_images.chunk(2)
        examples["original_pixel_values"] = original_images.reshape(-1, 3, args.resolution, args.resolution)
        examples["edited_pixel_values"] = edited_images.reshape(-1, 3, args.resolution, args.resolution)
        captions = list(examples[args.edit_prompt_column])
        examples["input_ids"] = tokenizer(captions, max_length=tokenizer.model_max_length, padding="max_length",
                                          truncation=True, return_tensors="pt").input_ids
        return examples

    with accelerator.main_process_first():
        train_dataset = dataset["train"].with_transform(preprocess_train)

    def collate_fn(examples):
        original_pixel_values = torch.stack([e["original_pixel_values"] for e in examples]).float()
        edited_pixel_values = torch.stack([e["edited_pixel_values"] for e in examples]).float()
        input_ids = torch.stack([e["input_ids"] for e in examples])
        return {"original_pixel_values": original_pixel_values, "edited_pixel_values": edited_pixel_values,
                "input_ids": input_ids}

    train_dataloader = torch.utils.data.DataLoader(train_dataset, shuffle=True, collate_fn=collate_fn,
                                                   batch_size=args.train_batch_size, num_workers=4)
    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    if args.max_train_steps is None:
        args.max_train_steps = args.num_train_epochs * num_update_steps_per_epoch
    lr_scheduler = get_scheduler("constant", optimizer=optimizer,
                                 num_training_steps=args.max_train_steps * accelerator.num_processes)
    unet, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(unet, optimizer, train_dataloader,
                                                                          lr_scheduler)
    if args.use_ema:
        ema_unet.to(accelerator.device)

    weight_dtype = torch.float32
    if accelerator.mixed_precision == "fp16":
        weight_dtype = torch.float16
    elif accelerator.mixed_precision == "bf16":
        weight_dtype = torch.bfloat16
    text_encoder.to(accelerator.device, dtype=weight_dtype)
    vae.to(accelerator.device, dtype=weight_dtype)

    global_step = 0
    progress_bar = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    for epoch in range(args.num_train_epochs):
        unet.train()
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(unet):
                latents = vae.encode(batch["edited_pixel_values"].to(weight_dtype)).latent_dist.sample()
                latents = latents * vae.config.scaling_factor
                noise = torch.randn_like(latents)
                bsz = latents.shape[0]
                timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (bsz,),
                                          device=latents.device).long()
                noisy_latents = noise_scheduler.add_noise(latents, noise, timesteps)
                encoder_hidden_states = text_encoder(batch["input_ids"])[0]
                original_image_embeds = vae.encode(batch["original_pixel_values"].to(weight_dtype)).latent_dist.mode()
                if args.conditioning_dropout_prob is not None:
                    random_p = torch.rand(bsz, device=latents.device, generator=generator)
                    prompt_mask = random_p < 2 * args.conditioning_dropout_prob
                    prompt_mask = prompt_mask.reshape(bsz, 1, 1)
                    null_conditioning = text_encoder(tokenizer([""], padding="max_length",
                                                               max_length=tokenizer.model_max_length,
                                                               return_tensors="pt").input_ids.to(
                        accelerator.device))[0]
                    encoder_hidden_states = torch.where(prompt_mask, null_conditioning, encoder_hidden_states)
                    image_mask_dtype = original_image_embeds.dtype
                    image_mask = 1 - ((random_p >= args.conditioning_dropout_prob).to(image_mask_dtype)
                                      * (random_p < 3 * args.conditioning_dropout_prob).to(image_mask_dtype))
                    image_mask = image_mask.reshape(bsz, 1, 1, 1)
                    original_image_embeds = image_mask * original_image_embeds
                concatenated_noisy_latents = torch.cat([noisy_latents, original_image_embeds], dim=1)
                model_pred = unet(concatenated_noisy_latents, timesteps, encoder_hidden_states, return_dict=False)[0]
                loss = F.mse_loss(model_pred.float(), noise.float(), reduction="mean")
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(unet.parameters(), 1.0)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            if accelerator.sync_gradients:
                if args.use_ema:
                    ema_unet.step(unet.parameters())
                progress_bar.update(1)
                global_step += 1
            if global_step >= args.max_train_steps:
                break

        if accelerator.is_main_process and args.validation_prompt is not None \
                and epoch % args.validation_epochs == 0:
            pipeline = StableDiffusionInstructPix2PixPipeline.from_pretrained(
                args.pretrained_model_name_or_path, unet=accelerator.unwrap_model(unet),
                text_encoder=text_encoder, vae=vae, torch_dtype=weight_dtype)
            log_validation(pipeline, args, accelerator, generator)
            del pipeline
            torch.cuda.empty_cache()

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        if args.use_ema:
            ema_unet.copy_to(unet.parameters())
        pipeline = StableDiffusionInstructPix2PixPipeline.from_pretrained(
            args.pretrained_model_name_or_path, text_encoder=text_encoder, vae=vae,
            unet=accelerator.unwrap_model(unet))
        pipeline.save_pretrained(args.output_dir)
    accelerator.end_training()


if __name__ == "__main__":
    main()
