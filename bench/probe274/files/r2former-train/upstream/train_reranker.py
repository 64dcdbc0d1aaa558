"""
Joint training of the global retrieval branch and the transformer re-ranking
module (R2Former-style) with DistributedDataParallel.

Launch (4 GPUs on one node):
    python -m torch.distributed.launch --nproc_per_node=4 --use_env train_reranker.py \
        --dataset_name msls --datasets_folder /data/vg_datasets --rerank_batch_size 20
"""
import argparse
import datetime
import json
import logging
import math
import os
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

import datasets_ws
import test
import utils.dist as utils
from model.network import GeoLocalizationNet
from model.reranker import RerankTransformer


def get_args_parser():
    parser = argparse.ArgumentParser('R2Former training', add_help=False)
    # Data
    parser.add_argument('--datasets_folder', type=str, required=True)
    parser.add_argument('--dataset_name', type=str, default='msls')
    parser.add_argument('--resize', type=int, default=[480, 640], nargs=2)
    parser.add_argument('--train_batch_size', type=int, default=4,
                        help='number of queries per GPU; each query comes with 1 positive and --negs_num_per_query negatives')
    parser.add_argument('--infer_batch_size', type=int, default=16)
    parser.add_argument('--negs_num_per_query', type=int, default=10)
    parser.add_argument('--cache_refresh_rate', type=int, default=1000)
    parser.add_argument('--queries_per_epoch', type=int, default=5000)
    parser.add_argument('--num_workers', type=int, default=8)
    # Model
    parser.add_argument('--backbone', type=str, default='deit_small_distilled_patch16_224')
    parser.add_argument('--features_dim', type=int, default=256)
    parser.add_argument('--num_local', type=int, default=500, help='number of local tokens used by the reranker')
    parser.add_argument('--rerank_batch_size', type=int, default=20)
    parser.add_argument('--rerank_loss_weight', type=float, default=1.0)
    # Optimisation
    parser.add_argument('--lr', type=float, default=1e-4)
    parser.add_argument('--weight_decay', type=float, default=5e-2)
    parser.add_argument('--epochs_num', type=int, default=50)
    parser.add_argument('--warmup_epochs', type=int, default=1)
    parser.add_argument('--clip_grad', type=float, default=1.0)
    parser.add_argument('--amp', action='store_true', help='use mixed precision (fp16)')
    parser.add_argument('--profile', action='store_true', help='annotate iterations with NVTX ranges for nsys')
    # Runtime
    parser.add_argument('--device', default='cuda', help='device to use for training / testing')
    parser.add_argument('--seed', type=int, default=42)
    parser.add_argument('--resume', type=str, default='')
    parser.add_argument('--output_dir', type=str, default='logs/r2former')
    parser.add_argument('--world_size', default=1, type=int, help='number of distributed processes')
    parser.add_argument('--dist_url', default='env://', help='url used to set up distributed training')
    parser.add_argument('--local_rank', type=int, default=0)
    return parser


def cosine_lr(optimizer, base_lr, epoch, it, iters_per_epoch, args):
    step = epoch * iters_per_epoch + it
    warmup = args.warmup_epochs * iters_per_epoch
    total = args.epochs_num * iters_per_epoch
    if step < warmup:
        lr = base_lr * step / max(1, warmup)
    else:
        lr = 0.5 * base_lr * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))
    for pg in optimizer.param_groups:
        pg['lr'] = lr * pg.get('lr_scale', 1.0)
    return lr


def rerank_pairs(local_feats, triplets_local_indexes, num_neg):
    """Build (query, candidate) pairs and 0/1 labels for the reranking loss."""
    q_idx = triplets_local_indexes[:, 0]
    p_idx = triplets_local_indexes[:, 1]
    n_idx = triplets_local_indexes[:, 2]
    # one positive pair per query, then all the negatives
    q_unique = q_idx[::num_neg]
    p_unique = p_idx[::num_neg]
    query = torch.cat([local_feats[q_unique], local_feats[q_idx]], dim=0)
    cand = torch.cat([local_feats[p_unique], local_feats[n_idx]], dim=0)
    labels = torch.cat([torch.ones(len(q_unique)), torch.zeros(len(q_idx))]).to(local_feats.device)
    return query, cand, labels


def train_one_epoch(model, reranker, criterion, data_loader, optimizer, scaler, device, epoch, args):
    model.train()
    reranker.train()
    metric_logger = utils.MetricLogger(delimiter="  ")
    metric_logger.add_meter('lr', utils.SmoothedValue(window_size=1, fmt='{value:.6f}'))
    header = f'Epoch: [{epoch}]'
    iters_per_epoch = len(data_loader)

    for it, (images, triplets_local_indexes, _) in enumerate(metric_logger.log_every(data_loader, 50, header)):
        lr = cosine_lr(optimizer, args.lr, epoch, it, iters_per_epoch, args)
        images = images.to(device, non_blocking=True)
        triplets_local_indexes = triplets_local_indexes.to(device, non_blocking=True)

        if args.profile:
            torch.cuda.nvtx.range_push(f"iter{it}")

        with torch.cuda.amp.autocast(enabled=args.amp):
            global_feats, local_feats = model(images)
            q, p, n = triplets_local_indexes[:, 0], triplets_local_indexes[:, 1], triplets_local_indexes[:, 2]
            loss_global = criterion(global_feats[q], global_feats[p], global_feats[n])

            query, cand, labels = rerank_pairs(local_feats, triplets_local_indexes, args.negs_num_per_query)
            logits = reranker(query, cand).squeeze(-1)
            loss_rerank = F.binary_cross_entropy_with_logits(logits.float(), labels)
            loss = loss_global + args.rerank_loss_weight * loss_rerank

        loss_value = loss.item()
        if not math.isfinite(loss_value):
            print(f"Loss is {loss_value}, stopping training")
            raise SystemExit(1)

        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        if args.clip_grad > 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(list(model.parameters()) + list(reranker.parameters()), args.clip_grad)
        scaler.step(optimizer)
        scaler.update()

        if args.profile:
            torch.cuda.nvtx.range_pop()

        metric_logger.update(loss=loss_value, loss_global=loss_global.item(), loss_rerank=loss_rerank.item())
        metric_logger.update(lr=lr)

    metric_logger.synchronize_between_processes()
    print("Averaged stats:", metric_logger)
    return {k: meter.global_avg for k, meter in metric_logger.meters.items()}


def main(args):
    utils.init_distributed_mode(args)
    print("git:\n  {}\n".format(utils.get_sha()))
    print(args)

    device = torch.device(args.device)

    # fix the seed for reproducibility
    seed = args.seed + utils.get_rank()
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    model = GeoLocalizationNet(args).to(device)
    reranker = RerankTransformer(dim=model.local_dim, num_local=args.num_local).to(device)

    if args.distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu], find_unused_parameters=True)
        reranker = torch.nn.parallel.DistributedDataParallel(reranker, device_ids=[args.gpu])
        model_without_ddp = model.module
        reranker_without_ddp = reranker.module
    else:
        model_without_ddp = model
        reranker_without_ddp = reranker

    n_parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print('number of params:', n_parameters)

    param_groups = [
        {'params': [p for p in model_without_ddp.parameters() if p.requires_grad], 'lr_scale': 1.0},
        {'params': reranker_without_ddp.parameters(), 'lr_scale': 10.0},
    ]
    optimizer = torch.optim.AdamW(param_groups, lr=args.lr, weight_decay=args.weight_decay)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    criterion = nn.TripletMarginLoss(margin=0.1, p=2, reduction='mean')

    triplets_ds = datasets_ws.TripletsDataset(args, args.datasets_folder, args.dataset_name, "train",
                                              args.negs_num_per_query)
    val_ds = datasets_ws.BaseDataset(args, args.datasets_folder, args.dataset_name, "val")

    start_epoch = 0
    best_r1 = 0.0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location='cpu')
        model_without_ddp.load_state_dict(checkpoint['model'])
        reranker_without_ddp.load_state_dict(checkpoint['reranker'])
        if 'optimizer' in checkpoint and 'epoch' in checkpoint:
            optimizer.load_state_dict(checkpoint['optimizer'])
            scaler.load_state_dict(checkpoint['scaler'])
            start_epoch = checkpoint['epoch'] + 1
            best_r1 = checkpoint.get('best_r1', 0.0)

    output_dir = Path(args.output_dir)
    if utils.is_main_process():
        output_dir.mkdir(parents=True, exist_ok=True)

    print("Start training")
    start_time = time.time()
    for epoch in range(start_epoch, args.epochs_num):
        # mining happens on every rank with the same seed so all ranks see the same triplets
        triplets_ds.is_inference = True
        triplets_ds.compute_triplets(args, model_without_ddp)
        triplets_ds.is_inference = False

        sampler_train = DistributedSampler(triplets_ds, shuffle=True) if args.distributed else None
        if sampler_train is not None:
            sampler_train.set_epoch(epoch)
        data_loader_train = DataLoader(triplets_ds, sampler=sampler_train, shuffle=(sampler_train is None),
                                       batch_size=args.train_batch_size, num_workers=args.num_workers,
                                       collate_fn=datasets_ws.collate_fn, pin_memory=True, drop_last=True)

        epoch_start = time.time()
        train_stats = train_one_epoch(model, reranker, criterion, data_loader_train, optimizer, scaler,
                                      device, epoch, args)
        torch.cuda.synchronize()
        epoch_time = time.time() - epoch_start

        recalls, recalls_str = test.test_rerank(args, val_ds, model_without_ddp, reranker_without_ddp, device)
        recall_tensor = torch.tensor(recalls, device=device)
        if args.distributed:
            dist.all_reduce(recall_tensor)
            recall_tensor /= utils.get_world_size()
        r1 = recall_tensor[0].item()

        checkpoint = {
            'model': model_without_ddp.state_dict(),
            'reranker': reranker_without_ddp.state_dict(),
            'optimizer': optimizer.state_dict(),
            'scaler': scaler.state_dict(),
            'epoch': epoch,
            'best_r1': max(best_r1, r1),
            'args': args,
        }
        utils.save_on_master(checkpoint, output_dir / 'last_checkpoint.pth')
        if r1 > best_r1:
            best_r1 = r1
            utils.save_on_master(checkpoint, output_dir / 'best_model.pth')

        log_stats = {**{f'train_{k}': v for k, v in train_stats.items()},
                     'val_R1': r1, 'val_recalls': recalls_str, 'epoch': epoch,
                     'epoch_time_s': epoch_time,
                     'max_mem_GB': torch.cuda.max_memory_allocated() / 1024 ** 3}
        if utils.is_main_process():
            with (output_dir / "log.txt").open("a") as f:
                f.write(json.dumps(log_stats) + "\n")

    total_time = time.time() - start_time
    total_time_str = str(datetime.timedelta(seconds=int(total_time)))
    print('Training time {}'.format(total_time_str))


if __name__ == '__main__':
    parser = argparse.ArgumentParser('R2Former training script', parents=[get_args_parser()])
    args = parser.parse_args()
    if args.output_dir:
        Path(args.output_dir).mkdir(parents=True, exist_ok=True)
    main(args)
