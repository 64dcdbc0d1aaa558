# D3PM on CIFAR-10 with 8 intensity bins per channel, DiT-Llama backbone.
#
# Multi-GPU:
#   torchrun --nproc_per_node=8 d3pm_runner_cifar.py --mixed_precision bf16
# Single GPU works too (falls back to a world size of 1).

import argparse
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torchvision.transforms as transforms
from PIL import Image
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision.datasets import CIFAR10
from torchvision.utils import make_grid
from tqdm import tqdm

from d3pm_runner import D3PM
from dit import DiT_Llama


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--n_bins", type=int, default=8)
    p.add_argument("--n_T", type=int, default=1000)
    p.add_argument("--batch_size", type=int, default=128, help="per-GPU batch size")
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--epochs", type=int, default=800)
    p.add_argument("--hybrid_loss_coeff", type=float, default=0.0)
    p.add_argument("--mixed_precision", type=str, default="bf16", choices=["no", "fp16", "bf16"])
    p.add_argument("--compile", action="store_true")
    p.add_argument("--ckpt_dir", type=str, default="ckpt_cifar")
    p.add_argument("--resume", type=str, default="")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sample_every", type=int, default=2000)
    p.add_argument("--save_every", type=int, default=10000)
    p.add_argument("--no_wandb", action="store_true")
    return p.parse_args()


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def setup_distributed():
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        rank = int(os.environ["RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group(backend="nccl", init_method="env://")
    else:
        rank, world_size, local_rank = 0, 1, 0
    torch.cuda.set_device(local_rank)
    return rank, world_size, local_rank


def is_main(rank):
    return rank == 0


def save_gif(images, n_bins, path):
    gif = []
    for image in images:
        x_as_image = make_grid(image.float() / (n_bins - 1), nrow=4)
        img = x_as_image.permute(1, 2, 0).cpu().numpy()
        img = (img * 255).astype(np.uint8)
        gif.append(Image.fromarray(img))
    gif[0].save(path, save_all=True, append_images=gif[1:], duration=100, loop=0)
    return gif[-1]


def main():
    args = parse_args()
    rank, world_size, local_rank = setup_distributed()
    device = torch.device(f"cuda:{local_rank}")
    seed_everything(args.seed + rank)

    # TF32 gives a free speedup on Ampere for the fp32 parts (transition matrices, loss)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    if args.mixed_precision == "bf16" and not torch.cuda.is_bf16_supported():
        if is_main(rank):
            print("bf16 is not supported on this GPU, falling back to fp16 autocast")
        args.mixed_precision = "fp16"
    amp_dtype = {"no": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[args.mixed_precision]
    use_amp = args.mixed_precision != "no"

    use_wandb = is_main(rank) and not args.no_wandb
    if use_wandb:
        import wandb

        wandb.init(project="d3pm_cifar10", config=vars(args))

    N = args.n_bins
    x0_model = DiT_Llama(3, N, dim=1024)
    d3pm = D3PM(x0_model, args.n_T, num_classes=N, hybrid_loss_coeff=args.hybrid_loss_coeff)
    d3pm = d3pm.to(device)
    if is_main(rank):
        print(f"Total Param Count: {sum([p.numel() for p in d3pm.x0_model.parameters()]) / 1e6:.1f}M")

    if world_size > 1:
        d3pm = DDP(d3pm, device_ids=[local_rank], output_device=local_rank)
    model = d3pm.module if world_size > 1 else d3pm
    if args.compile:
        model.x0_model = torch.compile(model.x0_model)

    dataset = CIFAR10(
        "./data",
        train=True,
        download=is_main(rank),
        transform=transforms.Compose(
            [
                transforms.RandomHorizontalFlip(),
                transforms.ToTensor(),
            ]
        ),
    )
    if world_size > 1:
        dist.barrier()
    sampler = DistributedSampler(dataset, num_replicas=world_size, rank=rank, shuffle=True) if world_size > 1 else None
    dataloader = DataLoader(
        dataset,
        batch_size=args.batch_size,
        shuffle=(sampler is None),
        sampler=sampler,
        num_workers=8,
        pin_memory=True,
        drop_last=True,
    )

    optim = torch.optim.AdamW(model.x0_model.parameters(), lr=args.lr, weight_decay=0.0)
    scaler = torch.cuda.amp.GradScaler(enabled=(args.mixed_precision == "fp16"))

    global_step = 0
    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f"cuda:{local_rank}")
        model.x0_model.load_state_dict(ckpt["model"])
        optim.load_state_dict(ckpt["optim"])
        scaler.load_state_dict(ckpt["scaler"])
        global_step = ckpt["global_step"]
        start_epoch = ckpt["epoch"]
        if is_main(rank):
            print(f"resumed from {args.resume} at step {global_step}")

    os.makedirs(args.ckpt_dir, exist_ok=True)
    os.makedirs("contents", exist_ok=True)
    d3pm.train()

    for epoch in range(start_epoch, args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        pbar = tqdm(dataloader, disable=not is_main(rank))
        loss_ema = None
        t0 = time.time()
        for x, cond in pbar:
            optim.zero_grad(set_to_none=True)
            x = x.to(device, non_blocking=True)
            cond = cond.to(device, non_blocking=True)

            # discretize x to N bins
            x = (x * (N - 1)).round().long().clamp(0, N - 1)

            with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=use_amp):
                loss, info = d3pm(x, cond)

            scaler.scale(loss).backward()
            scaler.unscale_(optim)
            norm = torch.nn.utils.clip_grad_norm_(model.x0_model.parameters(), 5.0)
            scaler.step(optim)
            scaler.update()

            if loss_ema is None:
                loss_ema = loss.item()
            else:
                loss_ema = 0.99 * loss_ema + 0.01 * loss.item()

            if use_wandb and global_step % 10 == 0:
                wandb.log(
                    {
                        "train_loss": loss.item(),
                        "train_grad_norm": norm.item(),
                        "vb_loss": info["vb_loss"],
                        "ce_loss": info["ce_loss"],
                        "lr": optim.param_groups[0]["lr"],
                    },
                    step=global_step,
                )
            pbar.set_description(f"ep {epoch} loss: {loss_ema:.4f}, norm: {norm:.4f}")
            global_step += 1

            if global_step % 100 == 0 and is_main(rank):
                mem = torch.cuda.max_memory_allocated(device) / 2**30
                dt = time.time() - t0
                print(f"step {global_step} | {100 * args.batch_size * world_size / dt:.1f} img/s | peak mem {mem:.2f} GB")
                t0 = time.time()

            if global_step % args.sample_every == 1 and is_main(rank):
                d3pm.eval()
                with torch.no_grad():
                    cond = torch.arange(0, 16, device=device) % 10
                    init_noise = torch.randint(0, N, (16, 3, 32, 32), device=device)
                    with torch.autocast("cuda", dtype=amp_dtype, enabled=use_amp):
                        images = model.sample_with_image_sequence(init_noise, cond, stride=40)
                    last_img = save_gif(images, N, f"contents/sample_cifar_{global_step}.gif")
                    last_img.save(f"contents/sample_cifar_{global_step}_last.png")
                    if use_wandb:
                        wandb.log({"sample": wandb.Image(last_img)}, step=global_step)
                d3pm.train()

            if global_step % args.save_every == 0 and is_main(rank):
                torch.save(
                    {
                        "model": model.x0_model.state_dict(),
                        "optim": optim.state_dict(),
                        "scaler": scaler.state_dict(),
                        "global_step": global_step,
                        "epoch": epoch,
                        "args": vars(args),
                    },
                    os.path.join(args.ckpt_dir, f"d3pm_cifar_{global_step:07d}.pt"),
                )
                torch.cuda.empty_cache()

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
