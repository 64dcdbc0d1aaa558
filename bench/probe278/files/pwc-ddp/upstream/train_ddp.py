"""
Distributed (DDP) + mixed-precision training for PointPWC-Net on FlyingThings3D / KITTI.

The original train.py uses nn.DataParallel, which does not scale past 2 cards
because the cost volume is huge. This script runs one process per GPU.

    torchrun --nproc_per_node=8 train_ddp.py config_train.yaml
"""

import os
import sys
import time
import math
import random
import logging
import argparse
import datetime
from pathlib import Path
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm

import cmd_args
import datasets
import transforms
from models import PointConvSceneFlowPWC8192selfglobalPointConv as PointConvSceneFlow
from models import multiScaleLoss

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False


def is_dist():
    return dist.is_available() and dist.is_initialized()


def get_rank():
    return dist.get_rank() if is_dist() else 0


def get_world_size():
    return dist.get_world_size() if is_dist() else 1


def setup_distributed(backend="nccl"):
    """Initialise the default process group from the torchrun environment."""
    if "RANK" not in os.environ:
        print("Not using distributed mode")
        return 0, 0, 1

    rank = int(os.environ["RANK"])
    local_rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])

    torch.cuda.set_device(local_rank)
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    dist.init_process_group(backend=backend, init_method="env://",
                            world_size=world_size, rank=rank,
                            timeout=datetime.timedelta(minutes=30))
    dist.barrier(device_ids=[local_rank])
    return rank, local_rank, world_size


def seed_all(seed, rank):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def reduce_mean(tensor):
    if not is_dist():
        return tensor
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= get_world_size()
    return rt


def build_loaders(args, world_size, rank):
    train_dataset = datasets.__dict__[args.dataset](
        train=True,
        transform=transforms.Augmentation(args.aug_together,
                                          args.aug_pc2,
                                          args.data_process,
                                          args.num_points),
        num_points=args.num_points,
        data_root=args.data_root,
        full=args.full
    )
    val_dataset = datasets.__dict__[args.dataset](
        train=False,
        transform=transforms.ProcessData(args.data_process,
                                         args.num_points,
                                         args.allow_less_points),
        num_points=args.num_points,
        data_root=args.data_root
    )

    train_sampler = DistributedSampler(train_dataset, num_replicas=world_size, rank=rank, shuffle=True)
    val_sampler = DistributedSampler(val_dataset, num_replicas=world_size, rank=rank, shuffle=False)

    train_loader = torch.utils.data.DataLoader(
        train_dataset,
        batch_size=args.batch_size,
        sampler=train_sampler,
        num_workers=args.workers,
        pin_memory=True,
        drop_last=True,
        persistent_workers=args.workers > 0,
        worker_init_fn=lambda x: np.random.seed((torch.initial_seed()) % (2 ** 32))
    )
    val_loader = torch.utils.data.DataLoader(
        val_dataset,
        batch_size=args.batch_size,
        sampler=val_sampler,
        num_workers=args.workers,
        pin_memory=torch.cuda.is_available(),
    )
    return train_loader, val_loader, train_sampler


def build_optimizer(args, model):
    if args.optimizer == 'SGD':
        return torch.optim.SGD(model.parameters(), lr=args.learning_rate, momentum=0.9)
    if HAS_APEX and getattr(args, "fused_adam", True):
        # ~15% faster step on V100/A100 for the 7.7M-param model
        return FusedAdam(model.parameters(), lr=args.learning_rate, betas=(0.9, 0.999),
                         eps=1e-08, weight_decay=args.weight_decay)
    return torch.optim.Adam(model.parameters(), lr=args.learning_rate, betas=(0.9, 0.999),
                            eps=1e-08, weight_decay=args.weight_decay)


def train_one_epoch(model, loader, optimizer, scaler, device, epoch, args, logger):
    model.train()
    total_loss = torch.zeros(1, device=device)
    total_seen = 0
    t0 = time.time()
    it = tqdm(loader, disable=get_rank() != 0, smoothing=0.9)
    for i, data in enumerate(it):
        pos1, pos2, norm1, norm2, flow, _ = data
        pos1 = pos1.to(device, non_blocking=True)
        pos2 = pos2.to(device, non_blocking=True)
        norm1 = norm1.to(device, non_blocking=True)
        norm2 = norm2.to(device, non_blocking=True)
        flow = flow.to(device, non_blocking=True)

        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast(enabled=args.amp):
            pred_flows, fps_pc1_idxs, _, _, _ = model(pos1, pos2, norm1, norm2)
        # the multi-scale loss sums over 8192 points, keep it in fp32
        loss = multiScaleLoss([p.float() for p in pred_flows], flow, fps_pc1_idxs)

        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=args.get("clip_grad", 10.0))
        scaler.step(optimizer)
        scaler.update()

        total_loss += loss.detach() * pos1.size(0)
        total_seen += pos1.size(0)

        if get_rank() == 0 and i % 200 == 0:
            mem = torch.cuda.max_memory_allocated(device) / 1024 ** 3
            logger.info("epoch %d it %d loss %.4f  %.2fs/it  max mem %.2fGB" %
                        (epoch, i, loss.item(), (time.time() - t0) / (i + 1), mem))

    total_loss = reduce_mean(total_loss / max(total_seen, 1))
    return total_loss.item()


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    epe_sum = torch.zeros(1, device=device)
    loss_sum = torch.zeros(1, device=device)
    count = torch.zeros(1, device=device)
    for data in loader:
        pos1, pos2, norm1, norm2, flow, _ = data
        pos1, pos2 = pos1.to(device), pos2.to(device)
        norm1, norm2 = norm1.to(device), norm2.to(device)
        flow = flow.to(device)

        pred_flows, fps_pc1_idxs, _, _, _ = model(pos1, pos2, norm1, norm2)
        eval_loss = multiScaleLoss(pred_flows, flow, fps_pc1_idxs)
        epe3d = torch.norm(pred_flows[0].permute(0, 2, 1) - flow, dim=2).mean()

        epe_sum += epe3d * pos1.size(0)
        loss_sum += eval_loss * pos1.size(0)
        count += pos1.size(0)

    if is_dist():
        for t in (epe_sum, loss_sum, count):
            dist.all_reduce(t)
    return (epe_sum / count).item(), (loss_sum / count).item()


def main():
    args = cmd_args.parse_args_from_yaml(sys.argv[1])

    backend = os.environ.get("DIST_BACKEND", "nccl")
    rank, local_rank, world_size = setup_distributed(backend)
    device = torch.device("cuda", local_rank)
    seed_all(args.get("seed", 1234), rank)
    torch.backends.cudnn.benchmark = True

    # ---- logging (rank 0 only) ----
    logger = logging.getLogger(args.model_name)
    logger.setLevel(logging.INFO if rank == 0 else logging.WARN)
    exp_dir = Path('./experiment/') / ('PointConvDDP%s-' % args.model_name + datetime.datetime.now().strftime('%Y-%m-%d_%H-%M'))
    ckpt_dir = exp_dir / 'checkpoints'
    if rank == 0:
        ckpt_dir.mkdir(parents=True, exist_ok=True)
        fh = logging.FileHandler(str(exp_dir / 'train.log'))
        fh.setFormatter(logging.Formatter('%(asctime)s - %(levelname)s - %(message)s'))
        logger.addHandler(fh)
        logger.info(args)
        props = torch.cuda.get_device_properties(local_rank)
        logger.info("world size %d, backend %s, device %s (%d MB)" %
                    (world_size, backend, props.name, props.total_memory // 2 ** 20))

    # ---- model ----
    model = PointConvSceneFlow()
    if args.pretrain is not None:
        state = torch.load(args.pretrain, map_location="cuda:%d" % local_rank)
        model.load_state_dict(state)
    model = model.to(device)
    if world_size > 1:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[local_rank], output_device=local_rank,
                    broadcast_buffers=False, find_unused_parameters=False)

    train_loader, val_loader, train_sampler = build_loaders(args, world_size, rank)
    optimizer = build_optimizer(args, model)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=80, gamma=0.5)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    best_epe = 1e9
    for epoch in range(args.epochs):
        train_sampler.set_epoch(epoch)
        train_loss = train_one_epoch(model, train_loader, optimizer, scaler, device, epoch, args, logger)
        scheduler.step()

        epe, eval_loss = evaluate(model, val_loader, device)
        if rank == 0:
            logger.info("EPOCH %d train loss %.5f  val epe3d %.5f  val loss %.5f" % (epoch, train_loss, epe, eval_loss))
            if epe < best_epe:
                best_epe = epe
                to_save = model.module if isinstance(model, DDP) else model
                torch.save(to_save.state_dict(), str(ckpt_dir / ('%s_%.3d_%.4f.pth' % (args.model_name, epoch, best_epe))))
        if backend == "nccl":
            # NCCL collectives are async; make sure rank 0 finished writing before the next epoch
            torch.cuda.synchronize(device)
            dist.barrier()

    if is_dist():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
