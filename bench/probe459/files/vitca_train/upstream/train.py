"""Train ViTCA / UNetCA denoising autoencoders (Tesfaldet et al., NeurIPS 2022).

Single GPU:
    python train.py experiment=landscapes
Multi GPU (DDP, one process per GPU):
    torchrun --nproc_per_node=4 train.py experiment=landscapes
"""
import logging
import math
import os
import random
import time

import hydra
import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from omegaconf import DictConfig, OmegaConf
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.tensorboard import SummaryWriter

from vitca.datasets.landscapes import build_loader
from vitca.models.vitca import ViTCA
from vitca.utils import distributed as dist_utils
from vitca.utils.metrics import psnr, ssim

log = logging.getLogger(__name__)


def seed_everything(seed, rank=0):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def setup_distributed(cfg):
    """Returns (rank, world_size, local_rank, device)."""
    if "LOCAL_RANK" in os.environ and int(os.environ.get("WORLD_SIZE", "1")) > 1:
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group(backend=cfg.distributed.backend, init_method="env://")
        rank = dist.get_rank()
        world_size = dist.get_world_size()
    else:
        local_rank, rank, world_size = 0, 0, 1
    device = torch.device(f"cuda:{local_rank}")
    return rank, world_size, local_rank, device


def corrupt(x, cfg):
    """Noise + random square masks, the ViTCA training corruption."""
    b, c, h, w = x.shape
    noisy = x + cfg.noise.std * torch.randn_like(x)
    mask = torch.ones((b, 1, h, w), device=x.device, dtype=x.dtype)
    for i in range(b):
        n_masks = random.randint(0, cfg.mask.max_count)
        for _ in range(n_masks):
            s = random.randint(cfg.mask.min_size, cfg.mask.max_size)
            y0 = random.randint(0, h - s)
            x0 = random.randint(0, w - s)
            mask[i, :, y0 : y0 + s, x0 : x0 + s] = 0.0
    return noisy * mask, mask


def build_model(cfg):
    m = cfg.model
    return ViTCA(
        depth=m.depth,
        heads=m.heads,
        mlp_dim=m.mlp_dim,
        dropout=m.dropout,
        cell_in_chans=m.cell_in_chans,
        cell_out_chans=m.cell_out_chans,
        cell_hidden_chans=m.cell_hidden_chans,
        embed_dim=m.embed_dim,
        localize_attn_size=m.localize_attn_size,
        pos_encoding_max_freq=m.pos_encoding_max_freq,
        cell_init=m.cell_init,
    )


@torch.no_grad()
def validate(model, loader, cfg, device):
    model.eval()
    net = model.module if isinstance(model, DDP) else model
    psnrs, ssims = [], []
    t0 = time.time()
    for x, _ in loader:
        x = x.to(device, non_blocking=True)
        x_in, _ = corrupt(x, cfg)
        cells = net.seed(x_in)
        with torch.cuda.amp.autocast(enabled=cfg.amp, dtype=torch.float16):
            cells = net(cells, step_n=cfg.ca.test_steps, update_rate=cfg.ca.update_rate)
        out = net.get_output(cells).float().clamp(0, 1)
        psnrs.append(psnr(out, x))
        ssims.append(ssim(out, x))
    torch.cuda.synchronize()
    stats = {
        "val/psnr": torch.stack(psnrs).mean(),
        "val/ssim": torch.stack(ssims).mean(),
    }
    stats = dist_utils.reduce_dict(stats)
    model.train()
    return {k: v.item() for k, v in stats.items()}, time.time() - t0


@torch.no_grad()
def robustness_sweep(net, loader, cfg, device, noise_levels=(0.0, 0.1, 0.2, 0.4, 0.8), n_batches=10):
    """PSNR of the denoised output as a function of the input noise level and of
    the number of CA steps (ViTCA keeps improving after the training horizon)."""
    net.eval()
    results = {}
    step_grid = [cfg.ca.test_steps // 2, cfg.ca.test_steps, cfg.ca.test_steps * 2]
    for std in noise_levels:
        for steps in step_grid:
            vals = []
            for b_idx, (x, _) in enumerate(loader):
                if b_idx >= n_batches:
                    break
                x = x.to(device)
                x_in = x + std * torch.randn_like(x)
                cells = net.seed(x_in)
                cells = net(cells, step_n=steps, update_rate=cfg.ca.update_rate)
                vals.append(psnr(net.get_output(cells).clamp(0, 1), x).item())
            results["noise%.2f_steps%d" % (std, steps)] = float(np.mean(vals)) if vals else float("nan")
    net.train()
    return results


def save_samples(net, x, cfg, path, steps=None):
    """Write a grid [input | corrupted | output] for a few validation images."""
    import torchvision.utils as vutils

    steps = steps or cfg.ca.test_steps
    with torch.no_grad():
        x_in, _ = corrupt(x, cfg)
        out = net.get_output(net(net.seed(x_in), step_n=steps, update_rate=cfg.ca.update_rate))
    grid = torch.cat([x, x_in.clamp(0, 1), out.float().clamp(0, 1)], dim=0)
    vutils.save_image(grid.cpu(), path, nrow=x.shape[0])


@hydra.main(config_path="conf", config_name="config", version_base=None)
def main(cfg: DictConfig):
    rank, world_size, local_rank, device = setup_distributed(cfg)
    seed_everything(cfg.seed, rank)
    torch.backends.cudnn.benchmark = cfg.cudnn_benchmark
    torch.backends.cuda.matmul.allow_tf32 = True

    if dist_utils.is_main_process():
        log.info("\n" + OmegaConf.to_yaml(cfg))
        log.info("world size %d, device %s (%s)", world_size, device, torch.cuda.get_device_name(device))
        writer = SummaryWriter(log_dir=os.getcwd())
    else:
        writer = None

    train_loader, train_sampler = build_loader(cfg, split="train", world_size=world_size, rank=rank)
    val_loader, _ = build_loader(cfg, split="val", world_size=world_size, rank=rank)

    model = build_model(cfg).to(device)
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank)
    net = model.module if world_size > 1 else model

    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.optim.lr, weight_decay=cfg.optim.weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.optim.iterations)
    scaler = torch.cuda.amp.GradScaler(enabled=cfg.amp)

    start_iter = 0
    ckpt_path = os.path.join(os.getcwd(), "checkpoint.pt")
    if cfg.resume and os.path.exists(ckpt_path):
        ckpt = torch.load(ckpt_path, map_location={"cuda:0": f"cuda:{local_rank}"})
        net.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scaler.load_state_dict(ckpt["scaler"])
        start_iter = ckpt["iter"] + 1
        log.info("resumed from iter %d", start_iter)

    # cell pool, as in growing NCA: half of each batch continues from old cells
    pool = None
    it = start_iter
    epoch = 0
    t_last = time.time()
    while it < cfg.optim.iterations:
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        for x, _ in train_loader:
            if it >= cfg.optim.iterations:
                break
            x = x.to(device, non_blocking=True)
            x_in, _ = corrupt(x, cfg)
            cells = net.seed(x_in)
            if pool is not None and cfg.ca.pool_frac > 0:
                k = int(cfg.ca.pool_frac * x.shape[0])
                cells[:k] = pool[:k]
                x_in[:k] = pool[:k, : net.cell_in_chans]
            step_n = random.randint(cfg.ca.min_steps, cfg.ca.max_steps)

            with torch.cuda.amp.autocast(enabled=cfg.amp):
                cells = model(cells, step_n=step_n, update_rate=cfg.ca.update_rate,
                              chkpt_segments=cfg.ca.checkpoint_segments)
                out = net.get_output(cells)
                rec_loss = F.l1_loss(out.float(), x)
                overflow = (cells - cells.clamp(-1.0, 1.0)).abs().mean()
                loss = rec_loss + cfg.optim.overflow_weight * overflow

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.optim.clip_grad)
            scaler.step(optimizer)
            scaler.update()
            sched.step()
            pool = cells.detach()

            if it % cfg.log_every == 0:
                stats = dist_utils.reduce_dict({"train/loss": loss.detach(), "train/rec": rec_loss.detach()})
                if writer is not None:
                    dt = (time.time() - t_last) / max(cfg.log_every, 1)
                    t_last = time.time()
                    for k, v in stats.items():
                        writer.add_scalar(k, v.item(), it)
                    mem = torch.cuda.max_memory_reserved(device) / 2 ** 30
                    log.info("iter %d loss %.4f  %.3fs/it  mem %.2fGB", it, stats["train/loss"].item(), dt, mem)

            if it % cfg.val_every == 0 and it > 0:
                val_stats, vt = validate(model, val_loader, cfg, device)
                if writer is not None:
                    for k, v in val_stats.items():
                        writer.add_scalar(k, v, it)
                    log.info("val @%d: %s (%.1fs)", it, val_stats, vt)

            if it % cfg.ckpt_every == 0 and dist_utils.is_main_process():
                torch.save(
                    {"model": net.state_dict(), "optimizer": optimizer.state_dict(),
                     "scaler": scaler.state_dict(), "iter": it},
                    ckpt_path,
                )
            it += 1
        epoch += 1

    if dist_utils.is_main_process():
        sweep = robustness_sweep(net, val_loader, cfg, device)
        with open(os.path.join(os.getcwd(), "robustness.json"), "w") as f:
            import json

            json.dump(sweep, f, indent=2)
        x_vis, _ = next(iter(val_loader))
        save_samples(net, x_vis[:8].to(device), cfg, os.path.join(os.getcwd(), "samples_final.png"))

    dist_utils.synchronize()
    if world_size > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
