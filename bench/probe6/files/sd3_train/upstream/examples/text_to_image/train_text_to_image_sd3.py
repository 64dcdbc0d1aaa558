#!/usr/bin/env python
# coding=utf-8
"""Fine-tune Stable Diffusion 3 (MMDiT) on an image-caption dataset with flow matching.

Launch with `accelerate launch train_text_to_image_sd3.py --pretrained_model_name_or_path ...`.
Tested on 8x A100 80GB; the CUDA kernels of xformers are optional but recommended.
"""
import argparse
import copy
import logging
import math
import os
import shutil

import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import ProjectConfiguration, set_seed
from datasets import load_dataset
from torchvision import transforms
from tqdm.auto import tqdm
from transformers import CLIPTextModelWithProjection, CLIPTokenizer, T5EncoderModel, T5TokenizerFast

from diffusers import AutoencoderKL, FlowMatchEulerDiscreteScheduler, SD3Transformer2DModel
from diffusers.optimization import get_scheduler
from diffusers.training_utils import compute_density_for_timestep_sampling, compute_loss_weighting_for_sd3
from diffusers.utils.import_utils import is_xformers_available

logger = get_logger(__name__)


def parse_args():
    parser = argparse.ArgumentParser(description="SD3 fine-tuning script.")
    parser.add_argument("--pretrained_model_name_or_path", type=str, required=True)
    parser.add_argument("--dataset_name", type=str, default=None)
    parser.add_argument("--output_dir", type=str, default="sd3-finetuned")
    parser.add_argument("--resolution", type=int, default=1024)
    parser.add_argument("--train_batch_size", type=int, default=4)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--gradient_checkpointing", action="store_true")
    parser.add_argument("--learning_rate", type=float, default=1e-5)
    parser.add_argument("--max_train_steps", type=int, default=10000)
    parser.add_argument("--lr_scheduler", type=str, default="constant")
    parser.add_argument("--lr_warmup_steps", type=int, default=500)
    parser.add_argument("--use_8bit_adam", action="store_true")
    parser.add_argument("--allow_tf32", action="store_true")
    parser.add_argument("--mixed_precision", type=str, default="bf16", choices=["no", "fp16", "bf16"])
    parser.add_argument("--enable_xformers_memory_efficient_attention", action="store_true")
    parser.add_argument("--weighting_scheme", type=str, default="logit_normal")
    parser.add_argument("--logit_mean", type=float, default=0.0)
    parser.add_argument("--logit_std", type=float, default=1.0)
    parser.add_argument("--mode_scale", type=float, default=1.29)
    parser.add_argument("--checkpointing_steps", type=int, default=500)
    parser.add_argument("--checkpoints_total_limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=None)
    return parser.parse_args()


def load_text_encoders(args, weight_dtype, device):
    te_one = CLIPTextModelWithProjection.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder")
    te_two = CLIPTextModelWithProjection.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder_2")
    te_three = T5EncoderModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder_3")
    for te in (te_one, te_two, te_three):
        te.requires_grad_(False)
        te.to(device, dtype=weight_dtype)
    return te_one, te_two, te_three


@torch.no_grad()
def encode_prompt(text_encoders, tokenizers, prompts, device, max_sequence_length=256):
    clip_embeds, pooled = [], []
    for tok, enc in zip(tokenizers[:2], text_encoders[:2]):
        ids = tok(prompts, padding="max_length", max_length=77, truncation=True, return_tensors="pt").input_ids
        out = enc(ids.to(device), output_hidden_states=True)
        pooled.append(out[0])
        clip_embeds.append(out.hidden_states[-2])
    clip_embeds = torch.cat(clip_embeds, dim=-1)
    t5_ids = tokenizers[2](prompts, padding="max_length", max_length=max_sequence_length, truncation=True,
                           return_tensors="pt").input_ids
    t5_embeds = text_encoders[2](t5_ids.to(device))[0]
    clip_embeds = F.pad(clip_embeds, (0, t5_embeds.shape[-1] - clip_embeds.shape[-1]))
    return torch.cat([clip_embeds, t5_embeds], dim=-2), torch.cat(pooled, dim=-1)


def main():
    args = parse_args()
    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        mixed_precision=args.mixed_precision,
        project_config=ProjectConfiguration(project_dir=args.output_dir),
    )
    logging.basicConfig(level=logging.INFO)
    if args.seed is not None:
        set_seed(args.seed)

    noise_scheduler = FlowMatchEulerDiscreteScheduler.from_pretrained(args.pretrained_model_name_or_path, subfolder="scheduler")
    noise_scheduler_copy = copy.deepcopy(noise_scheduler)
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_name_or_path, subfolder="vae")
    transformer = SD3Transformer2DModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="transformer")
    tokenizers = [
        CLIPTokenizer.from_pretrained(args.pretrained_model_name_or_path, subfolder="tokenizer"),
        CLIPTokenizer.from_pretrained(args.pretrained_model_name_or_path, subfolder="tokenizer_2"),
        T5TokenizerFast.from_pretrained(args.pretrained_model_name_or_path, subfolder="tokenizer_3"),
    ]

    weight_dtype = torch.float32
    if accelerator.mixed_precision == "fp16":
        weight_dtype = torch.float16
    elif accelerator.mixed_precision == "bf16":
        weight_dtype = torch.bfloat16

    vae.requires_grad_(False)
    vae.to(accelerator.device, dtype=torch.float32)
    text_encoders = load_text_encoders(args, weight_dtype, accelerator.device)

    if args.enable_xformers_memory_efficient_attention:
        if is_xformers_available():
            transformer.enable_xformers_memory_efficient_attention()
        else:
            raise ValueError("xformers is not available. Make sure it is installed correctly")
    if args.gradient_checkpointing:
        transformer.enable_gradient_checkpointing()

    # TF32 on Ampere gives a free speed-up for the fp32 parts of the model.
    if args.allow_tf32:
        torch.backends.cuda.matmul.allow_tf32 = True

    if args.use_8bit_adam:
        import bitsandbytes as bnb
        optimizer_class = bnb.optim.AdamW8bit
    else:
        optimizer_class = torch.optim.AdamW
    optimizer = optimizer_class(transformer.parameters(), lr=args.learning_rate, betas=(0.9, 0.999), weight_decay=1e-4)

    dataset = load_dataset(args.dataset_name, split="train")
    tfm = transforms.Compose([
        transforms.Resize(args.resolution), transforms.CenterCrop(args.resolution),
        transforms.ToTensor(), transforms.Normalize([0.5], [0.5]),
    ])

    def collate(examples):
        pixels = torch.stack([tfm(e["image"].convert("RGB")) for e in examples])
        return {"pixel_values": pixels.to(memory_format=torch.contiguous_format).float(),
                "prompts": [e["text"] for e in examples]}

    loader = torch.utils.data.DataLoader(dataset, batch_size=args.train_batch_size, shuffle=True,
                                         collate_fn=collate, num_workers=8, pin_memory=True)
    lr_scheduler = get_scheduler(args.lr_scheduler, optimizer=optimizer,
                                 num_warmup_steps=args.lr_warmup_steps * accelerator.num_processes,
                                 num_training_steps=args.max_train_steps * accelerator.num_processes)
    transformer, optimizer, loader, lr_scheduler = accelerator.prepare(transformer, optimizer, loader, lr_scheduler)

    def get_sigmas(timesteps, n_dim=4, dtype=torch.float32):
        sigmas = noise_scheduler_copy.sigmas.to(device=accelerator.device, dtype=dtype)
        schedule_timesteps = noise_scheduler_copy.timesteps.to(accelerator.device)
        step_indices = [(schedule_timesteps == t).nonzero().item() for t in timesteps.to(accelerator.device)]
        sigma = sigmas[step_indices].flatten()
        while len(sigma.shape) < n_dim:
            sigma = sigma.unsqueeze(-1)
        return sigma

    global_step = 0
    progress = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    while global_step < args.max_train_steps:
        for batch in loader:
            with accelerator.accumulate(transformer):
                pixels = batch["pixel_values"].to(dtype=vae.dtype)
                latents = vae.encode(pixels).latent_dist.sample()
                latents = (latents - vae.config.shift_factor) * vae.config.scaling_factor
                latents = latents.to(dtype=weight_dtype)
                prompt_embeds, pooled = encode_prompt(text_encoders, tokenizers, batch["prompts"], accelerator.device)

                noise = torch.randn_like(latents)
                u = compute_density_for_timestep_sampling(
                    weighting_scheme=args.weighting_scheme, batch_size=latents.shape[0],
                    logit_mean=args.logit_mean, logit_std=args.logit_std, mode_scale=args.mode_scale)
                indices = (u * noise_scheduler_copy.config.num_train_timesteps).long()
                timesteps = noise_scheduler_copy.timesteps[indices].to(device=latents.device)
                sigmas = get_sigmas(timesteps, n_dim=latents.ndim, dtype=latents.dtype)
                noisy = (1.0 - sigmas) * latents + sigmas * noise

                pred = transformer(hidden_states=noisy, timestep=timesteps, encoder_hidden_states=prompt_embeds,
                                   pooled_projections=pooled, return_dict=False)[0]
                weighting = compute_loss_weighting_for_sd3(weighting_scheme=args.weighting_scheme, sigmas=sigmas)
                target = noise - latents
                loss = torch.mean((weighting.float() * (pred.float() - target.float()) ** 2).reshape(target.shape[0], -1), 1).mean()
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(transformer.parameters(), 1.0)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad(set_to_none=True)

            if accelerator.sync_gradients:
                progress.update(1)
                global_step += 1
                if accelerator.is_main_process and global_step % args.checkpointing_steps == 0:
                    if args.checkpoints_total_limit is not None:
                        ckpts = sorted(d for d in os.listdir(args.output_dir) if d.startswith("checkpoint"))
                        for old in ckpts[: max(0, len(ckpts) - args.checkpoints_total_limit + 1)]:
                            shutil.rmtree(os.path.join(args.output_dir, old))
                    accelerator.save_state(os.path.join(args.output_dir, f"checkpoint-{global_step}"))
                    torch.cuda.empty_cache()
                    mem = torch.cuda.max_memory_reserved() / 2**30
                    logger.info(f"step {global_step}: loss {loss.item():.4f}, peak reserved {mem:.1f} GiB")
            if global_step >= args.max_train_steps:
                break

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        accelerator.unwrap_model(transformer).save_pretrained(os.path.join(args.output_dir, "transformer"))
    accelerator.end_training()


if __name__ == "__main__":
    main()
