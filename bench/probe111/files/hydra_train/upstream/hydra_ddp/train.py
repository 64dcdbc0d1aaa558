"""Hydra entry point for DDP training jobs swept with ``--multirun``.

Locally (joblib launcher, one job per GPU)::

    python train.py --multirun hydra/launcher=joblib optim.lr=1e-4,3e-4,1e-3

On the cluster (submitit SLURM launcher, 1 node x 8 GPUs per sweep point)::

    python train.py --multirun hydra/launcher=submitit_gpu optim.lr=1e-4,3e-4 model.depth=12,24

Under submitit every task is one rank; we read the SLURM / submitit
environment to set up ``torch.distributed``.
"""
import logging
import math
import os
import time
from pathlib import Path

import hydra
import torch
import torch.distributed as dist
import torch.nn as nn
from omegaconf import DictConfig, OmegaConf
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from hydra_ddp.data import build_dataset
from hydra_ddp.model import build_model

log = logging.getLogger(__name__)


def setup_distributed(cfg: DictConfig):
    """Returns (rank, local_rank, world_size) and initialises the process group."""
    if "SLURM_PROCID" in os.environ and cfg.dist.use_submitit:
        import submitit

        env = submitit.JobEnvironment()
        rank, local_rank, world_size = env.global_rank, env.local_rank, env.num_tasks
        os.environ.setdefault("MASTER_ADDR", env.hostnames[0])
        os.environ.setdefault("MASTER_PORT", str(cfg.dist.port))
    elif "RANK" in os.environ:  # torchrun
        rank = int(os.environ["RANK"])
        local_rank = int(os.environ["LOCAL_RANK"])
        world_size = int(os.environ["WORLD_SIZE"])
    else:
        # joblib launcher: single process, GPU picked from the hydra job number
        n_gpus = torch.cuda.device_count()
        job_num = HydraConfigJobNum.get()
        gpu = job_num % max(n_gpus, 1)
        os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
        return 0, 0, 1

    torch.cuda.set_device(local_rank)
    dist.init_process_group(
        backend=cfg.dist.backend,
        init_method="env://",
        rank=rank,
        world_size=world_size,
    )
    log.info("rank %d/%d on %s (cuda:%d)", rank, world_size, os.uname().nodename, local_rank)
    return rank, local_rank, world_size


class HydraConfigJobNum:
    @staticmethod
    def get() -> int:
        from hydra.core.hydra_config import HydraConfig

        try:
            return int(HydraConfig.get().job.num)
        except Exception:
            return 0


def lr_at(step, cfg):
    warm = cfg.optim.warmup_steps
    if step < warm:
        return cfg.optim.lr * step / max(1, warm)
    t = (step - warm) / max(1, cfg.optim.max_steps - warm)
    return cfg.optim.min_lr + 0.5 * (cfg.optim.lr - cfg.optim.min_lr) * (1 + math.cos(math.pi * t))


def evaluate(model, loader, device, world_size):
    model.eval()
    stats = torch.zeros(2, device=device)
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(x)
            stats[0] += (logits.argmax(-1) == y).sum()
            stats[1] += y.numel()
    if world_size > 1:
        dist.all_reduce(stats)
    model.train()
    return (stats[0] / stats[1]).item()


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> float:
    rank, local_rank, world_size = setup_distributed(cfg)
    device = torch.device(f"cuda:{local_rank}" if world_size > 1 else "cuda")
    torch.manual_seed(cfg.seed + rank)

    if rank == 0:
        log.info("\n%s", OmegaConf.to_yaml(cfg))

    train_ds, val_ds = build_dataset(cfg.data)
    train_sampler = DistributedSampler(train_ds, shuffle=True) if world_size > 1 else None
    val_sampler = DistributedSampler(val_ds, shuffle=False) if world_size > 1 else None
    train_loader = DataLoader(train_ds, batch_size=cfg.data.batch_size, sampler=train_sampler,
                              shuffle=train_sampler is None, num_workers=cfg.data.workers,
                              pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_ds, batch_size=cfg.data.batch_size, sampler=val_sampler,
                            num_workers=cfg.data.workers, pin_memory=True)

    model = build_model(cfg.model).to(device)
    if cfg.model.sync_bn and world_size > 1:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    if world_size > 1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank,
                    gradient_as_bucket_view=True, static_graph=cfg.dist.static_graph)

    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.optim.lr,
                                  weight_decay=cfg.optim.weight_decay, betas=(0.9, 0.95))
    criterion = nn.CrossEntropyLoss(label_smoothing=cfg.optim.label_smoothing)

    ckpt_path = Path(os.getcwd()) / "last.pt"
    step, epoch = 0, 0
    if ckpt_path.exists():
        state = torch.load(ckpt_path, map_location={"cuda:0": f"cuda:{local_rank}"})
        (model.module if world_size > 1 else model).load_state_dict(state["model"])
        optimizer.load_state_dict(state["optim"])
        step, epoch = state["step"], state["epoch"]
        log.info("resumed from %s at step %d", ckpt_path, step)

    prof = None
    if cfg.get("profile", False) and rank == 0:
        prof = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
            schedule=torch.profiler.schedule(wait=5, warmup=5, active=10, repeat=1),
            on_trace_ready=torch.profiler.tensorboard_trace_handler(os.path.join(os.getcwd(), "profile")),
            record_shapes=True,
            with_stack=False,
        )
        prof.start()

    best = 0.0
    t0 = time.time()
    while step < cfg.optim.max_steps:
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            for g in optimizer.param_groups:
                g["lr"] = lr_at(step, cfg)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=cfg.optim.bf16):
                loss = criterion(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), cfg.optim.clip)
            optimizer.step()
            step += 1
            if prof is not None:
                prof.step()
                if step >= 20:
                    prof.stop()
                    prof = None
            if step % cfg.log_every == 0 and rank == 0:
                mem = torch.cuda.max_memory_reserved(device) / 2 ** 30
                log.info("step %d loss %.4f lr %.2e %.1f it/s mem %.1fGiB", step, loss.item(),
                         lr_at(step, cfg), cfg.log_every / (time.time() - t0), mem)
                t0 = time.time()
            if step % cfg.eval_every == 0:
                acc = evaluate(model, val_loader, device, world_size)
                best = max(best, acc)
                if rank == 0:
                    log.info("step %d val_acc %.4f (best %.4f)", step, acc, best)
                    torch.save({"model": (model.module if world_size > 1 else model).state_dict(),
                                "optim": optimizer.state_dict(), "step": step, "epoch": epoch}, ckpt_path)
            if step >= cfg.optim.max_steps:
                break
        epoch += 1

    if world_size > 1:
        dist.barrier()
        dist.destroy_process_group()
    # the return value is what the Optuna / Nevergrad sweepers optimise
    return best


if __name__ == "__main__":
    main()
