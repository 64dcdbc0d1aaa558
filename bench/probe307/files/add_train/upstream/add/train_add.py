"""
Adversarial Diffusion Distillation (ADD) of SDXL into a 1-4 step student ("SDXL-Turbo" recipe).

Student  : SDXL UNet initialised from the teacher, trained at t in {999, 749, 499, 249}
Teacher  : frozen SDXL UNet (fp16), provides the score-distillation target with CFG
Adversary: frozen DINOv2 ViT-S/14 feature network + trainable projected heads (hinge loss, R1)

    torchrun --nproc_per_node 8 -m add.train_add --config configs/add_sdxl_turbo.json
"""
import argparse
import json
import math
import os
import time
from types import SimpleNamespace

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from diffusers import AutoencoderKL, EulerDiscreteScheduler, UNet2DConditionModel
from transformers import CLIPTextModel, CLIPTextModelWithProjection, CLIPTokenizer

from add.data import LaionAestheticsDataset
from add.discriminator import ProjectedDiscriminator
from add.text import encode_prompt_sdxl, sdxl_time_ids


def load_config(path):
    with open(path) as f:
        raw = json.load(f)

    def to_ns(d):
        if isinstance(d, dict):
            return SimpleNamespace(**{k: to_ns(v) for k, v in d.items()})
        return d

    return to_ns(raw)


def setup_distributed(cfg):
    """torchrun sets RANK / LOCAL_RANK / WORLD_SIZE; plain `python` runs single-GPU."""
    if "RANK" in os.environ:
        dist.init_process_group(backend=cfg.runtime.dist_backend)
        rank = dist.get_rank()
        world_size = dist.get_world_size()
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        device = torch.device(cfg.runtime.device, local_rank)
    else:
        rank, world_size, local_rank = 0, 1, 0
        device = torch.device(cfg.runtime.device)
    return rank, world_size, local_rank, device


def print0(*args, **kwargs):
    if not dist.is_initialized() or dist.get_rank() == 0:
        print(*args, **kwargs, flush=True)


def hinge_d_loss(logits_real, logits_fake):
    loss_real = sum(F.relu(1.0 - l).mean() for l in logits_real) / len(logits_real)
    loss_fake = sum(F.relu(1.0 + l).mean() for l in logits_fake) / len(logits_fake)
    return loss_real + loss_fake


def hinge_g_loss(logits_fake):
    return -sum(l.mean() for l in logits_fake) / len(logits_fake)


def r1_penalty(disc, real_images, cond):
    real_images = real_images.detach().requires_grad_(True)
    logits = disc(real_images, cond)
    grads = torch.autograd.grad(
        outputs=sum(l.sum() for l in logits), inputs=real_images, create_graph=True
    )[0]
    return grads.pow(2).flatten(1).sum(1).mean()


def add_noise(scheduler, x0, noise, t):
    alphas_cumprod = scheduler.alphas_cumprod.to(device=x0.device, dtype=torch.float32)
    a = alphas_cumprod[t].sqrt().view(-1, 1, 1, 1)
    s = (1 - alphas_cumprod[t]).sqrt().view(-1, 1, 1, 1)
    return (a * x0.float() + s * noise.float()).to(x0.dtype)


def pred_x0_from_eps(scheduler, x_t, eps, t):
    alphas_cumprod = scheduler.alphas_cumprod.to(device=x_t.device, dtype=torch.float32)
    a = alphas_cumprod[t].sqrt().view(-1, 1, 1, 1)
    s = (1 - alphas_cumprod[t]).sqrt().view(-1, 1, 1, 1)
    return (x_t.float() - s * eps.float()) / a


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--output_dir", default="runs/add")
    parser.add_argument("--resume", default=None)
    args = parser.parse_args()
    cfg = load_config(args.config)

    rank, world_size, local_rank, device = setup_distributed(cfg)
    torch.manual_seed(cfg.train.seed + rank)
    torch.backends.cudnn.benchmark = cfg.runtime.cudnn_benchmark
    torch.backends.cuda.matmul.allow_tf32 = True
    amp_dtype = getattr(torch, cfg.runtime.amp_dtype)

    os.makedirs(args.output_dir, exist_ok=True)
    print0(f"world size {world_size}, device {device}, amp {amp_dtype}")

    # ---------------------------------------------------------------- models
    tok_1 = CLIPTokenizer.from_pretrained(cfg.pretrained_teacher, subfolder="tokenizer")
    tok_2 = CLIPTokenizer.from_pretrained(cfg.pretrained_teacher, subfolder="tokenizer_2")
    te_1 = CLIPTextModel.from_pretrained(cfg.pretrained_teacher, subfolder="text_encoder", torch_dtype=torch.float16)
    te_2 = CLIPTextModelWithProjection.from_pretrained(
        cfg.pretrained_teacher, subfolder="text_encoder_2", torch_dtype=torch.float16
    )
    te_1.to(device).requires_grad_(False)
    te_2.to(device).requires_grad_(False)

    vae = AutoencoderKL.from_pretrained(cfg.vae, torch_dtype=torch.float16)
    vae.to(device).requires_grad_(False)

    scheduler = EulerDiscreteScheduler.from_pretrained(cfg.pretrained_teacher, subfolder="scheduler")

    teacher = UNet2DConditionModel.from_pretrained(cfg.pretrained_teacher, subfolder="unet")
    teacher = teacher.to("cuda", torch.float16)
    teacher.requires_grad_(False)
    teacher.eval()

    student = UNet2DConditionModel.from_pretrained(cfg.pretrained_student, subfolder="unet")
    student.to(device)
    student.enable_gradient_checkpointing()
    student.train()

    if cfg.runtime.attention_backend == "xformers":
        student.enable_xformers_memory_efficient_attention()
        teacher.enable_xformers_memory_efficient_attention()

    disc = ProjectedDiscriminator(
        feature_network=cfg.discriminator.feature_network,
        hooks=cfg.discriminator.hooks,
        head_channels=cfg.discriminator.head_channels,
        c_dim=1280,
    ).to(device)
    disc.train()

    student_ddp = DDP(student, device_ids=[local_rank], find_unused_parameters=False) if world_size > 1 else student
    disc_ddp = DDP(disc, device_ids=[local_rank], broadcast_buffers=False) if world_size > 1 else disc

    if cfg.runtime.compile_student:
        student_fwd = torch.compile(student_ddp, mode=cfg.runtime.compile_mode)
    else:
        student_fwd = student_ddp

    opt_g = torch.optim.AdamW(
        student.parameters(),
        lr=cfg.optimizer.lr,
        betas=tuple(cfg.optimizer.betas),
        weight_decay=cfg.optimizer.weight_decay,
        fused=cfg.optimizer.fused,
    )
    opt_d = torch.optim.AdamW(
        [p for p in disc.parameters() if p.requires_grad],
        lr=cfg.discriminator.lr,
        betas=(0.0, 0.99),
    )
    scaler_g = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)
    scaler_d = torch.cuda.amp.GradScaler(enabled=amp_dtype == torch.float16)

    # ---------------------------------------------------------------- data
    dataset = LaionAestheticsDataset(resolution=cfg.resolution)
    sampler = DistributedSampler(dataset, shuffle=True, seed=cfg.train.seed) if world_size > 1 else None
    loader = DataLoader(
        dataset,
        batch_size=cfg.train.batch_size_per_gpu,
        sampler=sampler,
        shuffle=sampler is None,
        num_workers=cfg.runtime.num_workers,
        pin_memory=cfg.runtime.pin_memory,
        drop_last=True,
        persistent_workers=True,
    )

    student_ts = torch.tensor(cfg.student_timesteps, device=device, dtype=torch.long)

    step = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location="cpu")
        student.load_state_dict(ckpt["student"])
        disc.load_state_dict(ckpt["disc"], strict=False)
        opt_g.load_state_dict(ckpt["opt_g"])
        opt_d.load_state_dict(ckpt["opt_d"])
        step = ckpt["step"]
        print0(f"resumed from {args.resume} at step {step}")

    epoch = 0
    t_last = time.time()
    while step < cfg.train.max_steps:
        if sampler is not None:
            sampler.set_epoch(epoch)
        for batch in loader:
            images = batch["pixel_values"].to(device, non_blocking=True)
            prompts = batch["caption"]
            bsz = images.shape[0]

            with torch.no_grad():
                prompt_embeds, pooled = encode_prompt_sdxl(prompts, [tok_1, tok_2], [te_1, te_2], device)
                neg_embeds, neg_pooled = encode_prompt_sdxl([""] * bsz, [tok_1, tok_2], [te_1, te_2], device)
                time_ids = sdxl_time_ids(bsz, cfg.resolution, device=device, dtype=prompt_embeds.dtype)
                latents = vae.encode(images.half()).latent_dist.sample() * vae.config.scaling_factor

            added = {"text_embeds": pooled, "time_ids": time_ids}

            # ---------------- generator step
            idx = torch.randint(0, len(student_ts), (bsz,), device=device)
            t_s = student_ts[idx]
            noise = torch.randn_like(latents)
            x_s = add_noise(scheduler, latents, noise, t_s)

            with torch.cuda.amp.autocast(dtype=amp_dtype):
                eps_s = student_fwd(x_s, t_s, encoder_hidden_states=prompt_embeds, added_cond_kwargs=added).sample
                x0_student = pred_x0_from_eps(scheduler, x_s, eps_s, t_s)

            # score distillation: renoise the student sample and ask the teacher (with CFG)
            t_t = torch.randint(20, 980, (bsz,), device=device)
            noise_t = torch.randn_like(x0_student)
            x_t = add_noise(scheduler, x0_student.detach(), noise_t, t_t)
            with torch.no_grad(), torch.cuda.amp.autocast(dtype=amp_dtype):
                x_in = torch.cat([x_t, x_t])
                eps_t = teacher(
                    x_in,
                    torch.cat([t_t, t_t]),
                    encoder_hidden_states=torch.cat([neg_embeds, prompt_embeds]),
                    added_cond_kwargs={
                        "text_embeds": torch.cat([neg_pooled, pooled]),
                        "time_ids": torch.cat([time_ids, time_ids]),
                    },
                ).sample
                eps_uncond, eps_cond = eps_t.chunk(2)
                eps_cfg = eps_uncond + cfg.teacher_cfg_scale * (eps_cond - eps_uncond)
                x0_teacher = pred_x0_from_eps(scheduler, x_t, eps_cfg, t_t)

            # exponential weighting c(t) = alpha_bar_t as in the ADD paper
            w_t = scheduler.alphas_cumprod.to(device)[t_t].view(-1, 1, 1, 1)
            loss_distill = (w_t * (x0_student.float() - x0_teacher.float()) ** 2).mean()

            fake_images = vae.decode((x0_student / vae.config.scaling_factor).half()).sample
            with torch.cuda.amp.autocast(enabled=True, dtype=amp_dtype):
                logits_fake = disc_ddp(fake_images, pooled)
                loss_adv_g = hinge_g_loss(logits_fake)

            loss_g = loss_adv_g + cfg.distill_weight * loss_distill
            opt_g.zero_grad(set_to_none=True)
            scaler_g.scale(loss_g).backward()
            scaler_g.unscale_(opt_g)
            torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
            scaler_g.step(opt_g)
            scaler_g.update()

            # ---------------- discriminator step
            with torch.cuda.amp.autocast(enabled=True, dtype=amp_dtype, cache_enabled=False):
                logits_real = disc_ddp(images.to(fake_images.dtype), pooled)
                logits_fake = disc_ddp(fake_images.detach(), pooled)
                loss_d = hinge_d_loss(logits_real, logits_fake)
            loss_r1 = cfg.discriminator.r1_gamma * r1_penalty(disc, images, pooled)

            opt_d.zero_grad(set_to_none=True)
            scaler_d.scale(loss_d + loss_r1).backward()
            scaler_d.step(opt_d)
            scaler_d.update()

            step += 1
            if step % cfg.train.log_every == 0:
                torch.cuda.synchronize()
                dt = (time.time() - t_last) / cfg.train.log_every
                t_last = time.time()
                mem = torch.cuda.max_memory_allocated(device) / 2**30
                print0(
                    f"step {step:6d} | g {loss_g.item():.4f} (adv {loss_adv_g.item():.4f}, "
                    f"dist {loss_distill.item():.4f}) | d {loss_d.item():.4f} r1 {loss_r1.item():.5f} "
                    f"| {dt:.2f}s/it | {mem:.1f} GiB"
                )

            if step % cfg.train.save_every == 0 and rank == 0:
                torch.save(
                    {
                        "student": student.state_dict(),
                        "disc": {k: v for k, v in disc.state_dict().items() if not k.startswith("feature_network")},
                        "opt_g": opt_g.state_dict(),
                        "opt_d": opt_d.state_dict(),
                        "step": step,
                    },
                    os.path.join(args.output_dir, f"ckpt_{step:06d}.pt"),
                )
            if world_size > 1 and step % cfg.train.save_every == 0:
                dist.barrier()
            if step >= cfg.train.max_steps:
                break
        epoch += 1

    if rank == 0:
        student.save_pretrained(os.path.join(args.output_dir, "unet_final"))
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
