"""
    CompletionFormer
    ======================================================================

    Training script using native PyTorch mixed precision (torch.cuda.amp) and
    torchrun-style DistributedDataParallel instead of apex.

    torchrun --nproc_per_node=4 train_amp.py --data_name KITTIDC ...
"""

import os
import json
import time
import random
import argparse

import numpy as np
from tqdm import tqdm

import torch
import torch.nn as nn
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

import utility
from config import args as args_config
from model import get as get_model
from data import get as get_data
from loss import get as get_loss
from summary import get as get_summary
from metric import get as get_metric


def parse_extra():
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument('--amp', action='store_true', default=False,
                        help='use torch.cuda.amp mixed precision')
    parser.add_argument('--amp_dtype', type=str, default='auto',
                        choices=('auto', 'fp16', 'bf16'),
                        help='autocast dtype; auto picks bf16 on Ampere+')
    parser.add_argument('--clip_grad', type=float, default=0.0,
                        help='max grad norm (0 = off)')
    parser.add_argument('--log_every', type=int, default=50)
    extra, _ = parser.parse_known_args()
    return extra


def seed_everything(seed, rank):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


def setup_distributed():
    """Initialise the process group from the torchrun environment."""
    if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:
        rank = int(os.environ['RANK'])
        world_size = int(os.environ['WORLD_SIZE'])
        local_rank = int(os.environ['LOCAL_RANK'])
    else:
        # single GPU debugging: python train_amp.py ...
        rank, world_size, local_rank = 0, 1, 0

    torch.cuda.set_device(local_rank)
    if world_size > 1:
        dist.init_process_group(backend='nccl', init_method='env://',
                                world_size=world_size, rank=rank)
        dist.barrier(device_ids=[local_rank])
    return rank, world_size, local_rank


def pick_amp_dtype(choice):
    if choice == 'fp16':
        return torch.float16
    if choice == 'bf16':
        return torch.bfloat16
    # auto: bf16 is only fast on compute capability >= 8.0 (A100 / RTX 30xx)
    major, _ = torch.cuda.get_device_capability()
    return torch.bfloat16 if major >= 8 else torch.float16


def reduce_tensor(t, world_size):
    rt = t.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    return rt / world_size


def train(args, extra):
    rank, world_size, local_rank = setup_distributed()
    device = torch.device('cuda', local_rank)
    seed_everything(args.seed, rank)

    # TF32 for convolutions / matmuls on Ampere
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True

    # Prepare dataset
    data = get_data(args)
    data_train = data(args, 'train')
    data_val = data(args, 'val')

    sampler_train = DistributedSampler(data_train, num_replicas=world_size, rank=rank,
                                       shuffle=True) if world_size > 1 else None
    sampler_val = DistributedSampler(data_val, num_replicas=world_size, rank=rank,
                                     shuffle=False) if world_size > 1 else None

    batch_size = args.batch_size // world_size
    loader_train = DataLoader(dataset=data_train, batch_size=batch_size,
                              shuffle=(sampler_train is None), num_workers=args.num_threads,
                              pin_memory=True, sampler=sampler_train, drop_last=True,
                              persistent_workers=args.num_threads > 0)
    loader_val = DataLoader(dataset=data_val, batch_size=1, shuffle=False,
                            num_workers=args.num_threads, pin_memory=True,
                            sampler=sampler_val, drop_last=False)

    # Network
    model = get_model(args)
    net = model(args)
    if world_size > 1:
        net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    net = net.to(device)

    if args.pretrain is not None:
        checkpoint = torch.load(args.pretrain, map_location='cpu')
        key_m, key_u = net.load_state_dict(checkpoint['net'], strict=False)
        if rank == 0:
            print('Load network parameters from : {}'.format(args.pretrain))
            if key_m:
                print('Missing keys : {}'.format(key_m))

    loss = get_loss(args)(args)
    loss = loss.to(device)

    optimizer, scheduler = utility.make_optimizer_scheduler(args, net)

    amp_dtype = pick_amp_dtype(extra.amp_dtype) if extra.amp else torch.float32
    scaler = torch.cuda.amp.GradScaler(enabled=extra.amp and amp_dtype == torch.float16)

    if args.pretrain is not None and args.resume:
        optimizer.load_state_dict(checkpoint['optimizer'])
        scheduler.load_state_dict(checkpoint['scheduler'])
        if 'scaler' in checkpoint:
            scaler.load_state_dict(checkpoint['scaler'])

    if world_size > 1:
        net = DDP(net, device_ids=[local_rank], output_device=local_rank,
                  find_unused_parameters=True)

    metric = get_metric(args)(args)
    summary = get_summary(args)

    if rank == 0:
        os.makedirs(args.save_dir + '/train', exist_ok=True)
        os.makedirs(args.save_dir + '/val', exist_ok=True)
        utility.backup_source_code(args.save_dir + '/code')
        writer_train = summary(args.save_dir, 'train', args, loss.loss_name, metric.metric_name)
        writer_val = summary(args.save_dir, 'val', args, loss.loss_name, metric.metric_name)
        with open(args.save_dir + '/args.json', 'w') as f:
            json.dump(args.__dict__, f, indent=4)

    for epoch in range(1, args.epochs + 1):
        net.train()
        if sampler_train is not None:
            sampler_train.set_epoch(epoch)

        if rank == 0:
            pbar = tqdm(total=len(loader_train) * batch_size * world_size)
            log_loss, log_cnt = 0.0, 0
            torch.cuda.reset_peak_memory_stats(device)
            t_epoch = time.time()

        for it, sample in enumerate(loader_train):
            sample = {key: val.to(device, non_blocking=True)
                      for key, val in sample.items() if val is not None}

            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=extra.amp, dtype=amp_dtype):
                output = net(sample)
                loss_sum, loss_val = loss(sample, output)
                loss_sum = loss_sum / loader_train.batch_size
                loss_val = loss_val / loader_train.batch_size

            scaler.scale(loss_sum).backward()
            if extra.clip_grad > 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(net.parameters(), extra.clip_grad)
            scaler.step(optimizer)
            scaler.update()

            if rank == 0:
                metric_val = metric.evaluate(sample, output, 'train')
                writer_train.add(loss_val, metric_val)
                log_cnt += 1
                log_loss += loss_sum.item()
                if it % extra.log_every == 0:
                    mem = torch.cuda.max_memory_allocated(device) / 2 ** 30
                    pbar.set_description('Train | Loss = {:.4f} | mem {:.1f}G'.format(
                        log_loss / log_cnt, mem))
                pbar.update(loader_train.batch_size * world_size)

        if rank == 0:
            pbar.close()
            writer_train.update(epoch, sample, output)
            print('epoch {} took {:.1f} min'.format(epoch, (time.time() - t_epoch) / 60))
            state = {
                'net': net.module.state_dict() if world_size > 1 else net.state_dict(),
                'optimizer': optimizer.state_dict(),
                'scheduler': scheduler.state_dict(),
                'scaler': scaler.state_dict(),
                'args': args,
            }
            torch.save(state, '{}/model_{:05d}.pt'.format(args.save_dir, epoch))

        # Validation
        net.eval()
        with torch.no_grad():
            val_loss = torch.zeros(1, device=device)
            n_val = 0
            for it, sample in enumerate(loader_val):
                sample = {key: val.to(device, non_blocking=True)
                          for key, val in sample.items() if val is not None}
                with torch.cuda.amp.autocast(enabled=extra.amp, dtype=amp_dtype):  # same precision as training
                    output = net(sample)
                    loss_sum, loss_val = loss(sample, output)
                val_loss += loss_sum.float()
                n_val += 1
                if rank == 0:
                    metric_val = metric.evaluate(sample, output, 'val')
                    writer_val.add(loss_val, metric_val)

            if world_size > 1:
                val_loss = reduce_tensor(val_loss, world_size)
            if rank == 0:
                print('Val loss: {:.4f}'.format(val_loss.item() / max(n_val, 1)))
                writer_val.update(epoch, sample, output)
                writer_val.save(epoch, it, sample, output)

        scheduler.step()
        torch.cuda.empty_cache()

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == '__main__':
    extra = parse_extra()
    if int(os.environ.get('LOCAL_RANK', 0)) == 0:
        print('CUDA devices visible: {}'.format(os.environ.get('CUDA_VISIBLE_DEVICES', 'all')))
    train(args_config, extra)
