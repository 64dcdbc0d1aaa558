"""Masked-patch self-supervised pretraining of PatchTST, multi-GPU.

Single node, 8 GPUs:
    torchrun --nproc_per_node 8 patchtst_pretrain_ddp.py --dset_pretrain weather --context_points 512 \
        --patch_len 12 --stride 12 --mask_ratio 0.4 --n_epochs_pretrain 100 --amp --compile

Falls back to a single device when not launched through torchrun.
"""
import argparse
import math
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

from src.models.patchTST import PatchTST
from src.callback.patch_mask import create_patch, random_masking
from src.callback.transforms import RevIN
from datautils import get_dataset

try:
    # NVIDIA apex fused Adam: ~15% faster optimizer step on large d_model
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")


def parse_args():
    parser = argparse.ArgumentParser()
    # Dataset and dataloader
    parser.add_argument('--dset_pretrain', type=str, default='etth1', help='dataset name')
    parser.add_argument('--context_points', type=int, default=512, help='sequence length')
    parser.add_argument('--target_points', type=int, default=96, help='forecast horizon')
    parser.add_argument('--batch_size', type=int, default=64, help='batch size per GPU')
    parser.add_argument('--num_workers', type=int, default=8, help='number of workers for DataLoader')
    parser.add_argument('--scaler', type=str, default='standard', help='scale the input data')
    parser.add_argument('--features', type=str, default='M', help='for multivariate model or univariate model')
    # Patch
    parser.add_argument('--patch_len', type=int, default=12, help='patch length')
    parser.add_argument('--stride', type=int, default=12, help='stride between patch')
    # RevIN
    parser.add_argument('--revin', type=int, default=1, help='reversible instance normalization')
    # Model args
    parser.add_argument('--n_layers', type=int, default=3, help='number of Transformer layers')
    parser.add_argument('--n_heads', type=int, default=16, help='number of Transformer heads')
    parser.add_argument('--d_model', type=int, default=128, help='Transformer d_model')
    parser.add_argument('--d_ff', type=int, default=512, help='Tranformer MLP dimension')
    parser.add_argument('--dropout', type=float, default=0.2, help='Transformer dropout')
    parser.add_argument('--head_dropout', type=float, default=0.2, help='head dropout')
    # Pretrain mask
    parser.add_argument('--mask_ratio', type=float, default=0.4, help='masking ratio for the input')
    # Optimization args
    parser.add_argument('--n_epochs_pretrain', type=int, default=10, help='number of pre-training epochs')
    parser.add_argument('--lr', type=float, default=1e-4, help='learning rate')
    parser.add_argument('--weight_decay', type=float, default=1e-2)
    parser.add_argument('--amp', action='store_true', help='bf16/fp16 autocast')
    parser.add_argument('--compile', action='store_true', help='torch.compile the backbone (needs sm70+)')
    # model id to keep track of the number of models saved
    parser.add_argument('--pretrained_model_id', type=int, default=1, help='id of the saved pretrained model')
    parser.add_argument('--model_type', type=str, default='based_model', help='for multivariate model or univariate model')
    parser.add_argument('--save_path', type=str, default='saved_models/')
    return parser.parse_args()


def setup_distributed():
    """Returns (is_distributed, rank, world_size, local_rank, device)."""
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        dist.init_process_group(backend="nccl", init_method="env://")
        rank = dist.get_rank()
        world_size = dist.get_world_size()
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        return True, rank, world_size, local_rank, device
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return False, 0, 1, 0, device


def barrier():
    if not dist.is_initialized():
        return
    if dist.get_backend() == "nccl":
        dist.barrier(device_ids=[torch.cuda.current_device()])
    else:
        dist.barrier()


def all_reduce_mean(value, device):
    if not dist.is_initialized():
        return value
    t = torch.tensor([value], dtype=torch.float32, device=device)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return (t / dist.get_world_size()).item()


def build_model(args, c_in, num_patch):
    model = PatchTST(c_in=c_in,
                     target_dim=args.patch_len,
                     patch_len=args.patch_len,
                     stride=args.stride,
                     num_patch=num_patch,
                     n_layers=args.n_layers,
                     n_heads=args.n_heads,
                     d_model=args.d_model,
                     shared_embedding=True,
                     d_ff=args.d_ff,
                     dropout=args.dropout,
                     head_dropout=args.head_dropout,
                     act='relu',
                     head_type='pretrain',
                     res_attention=False
                     )
    return model


def masked_mse(pred, target, mask):
    # pred/target: [bs x num_patch x n_vars x patch_len], mask: [bs x num_patch x n_vars]
    loss = (pred - target) ** 2
    loss = loss.mean(dim=-1)
    return (loss * mask).sum() / mask.sum().clamp_min(1.0)


def main():
    args = parse_args()
    is_dist, rank, world_size, local_rank, device = setup_distributed()
    is_main = rank == 0

    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    train_set = get_dataset(args.dset_pretrain, 'train', args.context_points, args.target_points,
                            features=args.features, scale=args.scaler)
    valid_set = get_dataset(args.dset_pretrain, 'val', args.context_points, args.target_points,
                            features=args.features, scale=args.scaler)
    train_sampler = DistributedSampler(train_set, shuffle=True, drop_last=True) if is_dist else None
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=(train_sampler is None),
                              sampler=train_sampler, num_workers=args.num_workers, drop_last=True,
                              pin_memory=True, persistent_workers=args.num_workers > 0)
    valid_loader = DataLoader(valid_set, batch_size=args.batch_size, shuffle=False,
                              num_workers=args.num_workers, pin_memory=True)

    c_in = train_set[0][0].shape[-1]
    num_patch = (max(args.context_points, args.patch_len) - args.patch_len) // args.stride + 1
    model = build_model(args, c_in, num_patch).to(device)
    revin = RevIN(c_in, eps=1e-5, affine=False).to(device) if args.revin else None

    if args.compile and torch.cuda.get_device_capability()[0] >= 7:
        model = torch.compile(model, mode="max-autotune")

    if is_dist:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=False)

    if HAS_APEX:
        optimizer = FusedAdam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay, adam_w_mode=True)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay, fused=True)
    steps_per_epoch = len(train_loader)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.lr, pct_start=0.3,
                                                    epochs=args.n_epochs_pretrain, steps_per_epoch=steps_per_epoch)

    amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp and amp_dtype == torch.float16)

    save_dir = Path(args.save_path) / args.dset_pretrain / 'masked_patchtst' / args.model_type
    if is_main:
        save_dir.mkdir(parents=True, exist_ok=True)
    save_name = 'patchtst_pretrained_cw{}_patch{}_stride{}_epochs-pretrain{}_mask{}_model{}'.format(
        args.context_points, args.patch_len, args.stride, args.n_epochs_pretrain, args.mask_ratio,
        args.pretrained_model_id)

    def run_batch(xb, train=True):
        xb = xb.to(device, non_blocking=True)
        if revin is not None:
            xb = revin(xb, 'norm')
        xb_patch, _ = create_patch(xb, args.patch_len, args.stride)
        xb_mask, _, mask, _ = random_masking(xb_patch, args.mask_ratio)
        with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=args.amp):
            pred = model(xb_mask)
            loss = masked_mse(pred.float(), xb_patch, mask.float())
        return loss

    best_val = math.inf
    history = []
    for epoch in range(args.n_epochs_pretrain):
        if is_dist:
            train_sampler.set_epoch(epoch)
        model.train()
        torch.cuda.reset_peak_memory_stats()
        t0 = time.time()
        running = 0.0
        for step, (xb, _) in enumerate(train_loader):
            optimizer.zero_grad(set_to_none=True)
            loss = run_batch(xb)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            running += loss.item()
        torch.cuda.synchronize()
        epoch_time = time.time() - t0
        train_loss = all_reduce_mean(running / steps_per_epoch, device)

        model.eval()
        val_running, n_val = 0.0, 0
        with torch.no_grad():
            for xb, _ in valid_loader:
                val_running += run_batch(xb, train=False).item()
                n_val += 1
        val_loss = all_reduce_mean(val_running / max(n_val, 1), device)

        if is_main:
            peak = torch.cuda.max_memory_allocated() / 2 ** 30
            print(f"epoch {epoch:3d} | train {train_loss:.5f} | valid {val_loss:.5f} | "
                  f"{epoch_time:.1f}s | peak {peak:.2f} GiB | world {world_size}")
            history.append({'epoch': epoch, 'train_loss': train_loss, 'valid_loss': val_loss})
            if val_loss < best_val:
                best_val = val_loss
                state = model.module.state_dict() if is_dist else model.state_dict()
                state = {k.replace('_orig_mod.', ''): v for k, v in state.items()}
                torch.save(state, save_dir / (save_name + '.pth'))
        barrier()

    if is_main:
        pd.DataFrame(history).to_csv(save_dir / (save_name + '_losses.csv'), float_format='%.6f', index=False)
        print('pretrained model saved to', save_dir / (save_name + '.pth'))

    if is_dist:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
