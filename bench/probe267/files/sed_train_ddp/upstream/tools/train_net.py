#!/usr/bin/env python
"""Distributed training entry for surveillance event localisation.

Launch with torchrun, one process per GPU:

    torchrun --nproc_per_node=8 tools/train_net.py configs/ucf_crime_i3d.yaml --output exp1

Anomalous events (fighting, robbery, road accidents, ...) are localised as
temporal segments on top of pre-extracted I3D / CLIP snippet features.
"""
import argparse
import datetime
import os
import random
import time
from copy import deepcopy
from pprint import pprint

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from libs.core import load_config
from libs.datasets import make_dataset, trivial_batch_collator, worker_init_reset_seed
from libs.modeling import make_meta_arch
from libs.utils import (AverageMeter, ModelEma, make_optimizer, make_scheduler,
                        save_checkpoint, valid_one_epoch, EventDetectionEvaluator)


################################################################################
# distributed helpers
################################################################################
def is_dist():
    return dist.is_available() and dist.is_initialized()


def get_rank():
    return dist.get_rank() if is_dist() else 0


def get_world_size():
    return dist.get_world_size() if is_dist() else 1


def setup_distributed(args):
    """Initialise NCCL from the env:// variables set by torchrun."""
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        print("Not using distributed mode")
        args.distributed = False
        args.local_rank = 0
        return
    args.distributed = True
    args.rank = int(os.environ["RANK"])
    args.world_size = int(os.environ["WORLD_SIZE"])
    args.local_rank = int(os.environ.get("LOCAL_RANK", 0))

    torch.cuda.set_device(args.local_rank)
    dist.init_process_group(
        backend="nccl",
        init_method="env://",
        world_size=args.world_size,
        rank=args.rank,
        timeout=datetime.timedelta(minutes=30),
    )
    dist.barrier()
    if args.rank == 0:
        print("| distributed init (rank {}/{}, local {}), backend {}".format(
            args.rank, args.world_size, args.local_rank, dist.get_backend()), flush=True)


def reduce_tensor(t):
    if not is_dist():
        return t
    rt = t.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= get_world_size()
    return rt


def fix_random_seed(seed, include_cuda=True):
    rng_generator = torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    os.environ["PYTHONHASHSEED"] = str(seed)
    if include_cuda:
        # training: disable cudnn benchmark to ensure the reproducibility
        cudnn.enabled = True
        cudnn.benchmark = False
        cudnn.deterministic = True
        torch.cuda.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)
        # this is needed for CUDA >= 10.2
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
        torch.use_deterministic_algorithms(True, warn_only=True)
    else:
        cudnn.enabled = True
        cudnn.benchmark = True
    return rng_generator


class CudaPrefetcher:
    """Overlap H2D copies of the next batch with the current step."""

    def __init__(self, loader, device):
        self.loader = iter(loader)
        self.device = device
        self.stream = torch.cuda.Stream(device=device)
        self.preload()

    def _move(self, item):
        if torch.is_tensor(item):
            return item.pin_memory().to(self.device, non_blocking=True)
        if isinstance(item, dict):
            return {k: self._move(v) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return type(item)(self._move(v) for v in item)
        return item

    def preload(self):
        try:
            self.batch = next(self.loader)
        except StopIteration:
            self.batch = None
            return
        with torch.cuda.stream(self.stream):
            self.batch = self._move(self.batch)

    def __iter__(self):
        return self

    def __next__(self):
        torch.cuda.current_stream(self.device).wait_stream(self.stream)
        batch = self.batch
        if batch is None:
            raise StopIteration
        for item in batch:
            for v in item.values():
                if torch.is_tensor(v):
                    v.record_stream(torch.cuda.current_stream(self.device))
        self.preload()
        return batch


################################################################################
# train / eval loops
################################################################################
def train_one_epoch(loader, model, optimizer, scheduler, scaler, curr_epoch, model_ema=None,
                    clip_grad_l2norm=-1, tb_writer=None, print_freq=20, use_amp=True, device=None):
    batch_time = AverageMeter()
    losses_tracker = {}
    num_iters = len(loader)
    model.train()

    print("\n[Train]: Epoch {:d} started".format(curr_epoch))
    start = time.time()
    for iter_idx, video_list in enumerate(CudaPrefetcher(loader, device)):
        optimizer.zero_grad(set_to_none=True)
        with torch.cuda.amp.autocast(enabled=use_amp):
            losses = model(video_list)
        scaler.scale(losses['final_loss']).backward()
        if clip_grad_l2norm > 0.0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad_l2norm)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()

        if model_ema is not None:
            model_ema.update(model)

        if (iter_idx != 0) and (iter_idx % print_freq) == 0:
            torch.cuda.synchronize()
            batch_time.update((time.time() - start) / print_freq)
            start = time.time()

            for key, value in losses.items():
                value = reduce_tensor(value.detach()).item()
                if key not in losses_tracker:
                    losses_tracker[key] = AverageMeter()
                losses_tracker[key].update(value)

            lr = scheduler.get_last_lr()[0]
            global_step = curr_epoch * num_iters + iter_idx
            if tb_writer is not None and get_rank() == 0:
                tb_writer.add_scalar('train/learning_rate', lr, global_step)
                for key, meter in losses_tracker.items():
                    tb_writer.add_scalar('train/' + key, meter.val, global_step)

            if get_rank() == 0:
                block1 = 'Epoch: [{:03d}][{:05d}/{:05d}]'.format(curr_epoch, iter_idx, num_iters)
                block2 = 'Time {:.2f} ({:.2f})'.format(batch_time.val, batch_time.avg)
                block3 = 'Loss {:.2f} ({:.2f})'.format(
                    losses_tracker['final_loss'].val, losses_tracker['final_loss'].avg)
                block4 = 'mem {:.0f}MB'.format(torch.cuda.max_memory_allocated() / 1024.0 / 1024.0)
                print('\t'.join([block1, block2, block3, block4]))

    lr = scheduler.get_last_lr()[0]
    print("[Train]: Epoch {:d} finished with lr={:.8f}\n".format(curr_epoch, lr))


@torch.no_grad()
def frame_level_auc(loader, model, gt_frames, device, snippet_len=16):
    """Frame-level ROC-AUC of the class-agnostic actionness, the usual WS-VAD metric.

    Used as a cheap sanity check next to mAP: a localisation model that is good
    at mAP but bad at AUC usually over-fires on normal videos.
    """
    from sklearn.metrics import roc_auc_score
    model.eval()
    scores = []
    for video_list in loader:
        feats = video_list[0]['feats'].unsqueeze(0).to(device, non_blocking=True)
        with torch.cuda.amp.autocast():
            actionness = model.module.actionness(feats) if hasattr(model, 'module') else model.actionness(feats)
        s = actionness.float().squeeze(0).cpu().numpy()
        scores.append(np.repeat(s, snippet_len))
    pred = np.concatenate(scores)[:len(gt_frames)]
    model.train()
    return roc_auc_score(gt_frames[:len(pred)], pred)


################################################################################
def main(args):
    """main function that handles training / inference"""
    setup_distributed(args)

    # parse args
    args.start_epoch = 0
    if os.path.isfile(args.config):
        cfg = load_config(args.config)
    else:
        raise ValueError("Config file does not exist.")
    if get_rank() == 0:
        pprint(cfg)

    # prep for output folder (based on time stamp)
    if not os.path.exists(cfg['output_folder']):
        os.makedirs(cfg['output_folder'], exist_ok=True)
    cfg_filename = os.path.basename(args.config).replace('.yaml', '')
    ckpt_folder = os.path.join(cfg['output_folder'], cfg_filename + '_' + str(args.output))
    if get_rank() == 0 and not os.path.exists(ckpt_folder):
        os.makedirs(ckpt_folder, exist_ok=True)
    tb_writer = SummaryWriter(os.path.join(ckpt_folder, 'logs')) if get_rank() == 0 else None

    # fix the random seeds (this will fix everything)
    rng_generator = fix_random_seed(cfg['init_rand_seed'] + get_rank(), include_cuda=True)

    # re-scale learning rate / # workers based on number of GPUs
    cfg['opt']["learning_rate"] *= get_world_size()
    cfg['loader']['num_workers'] = max(cfg['loader']['num_workers'] // get_world_size(), 2)

    # datasets / loaders
    train_dataset = make_dataset(cfg['dataset_name'], True, cfg['train_split'], **cfg['dataset'])
    train_db_vars = train_dataset.get_attributes()
    cfg['model']['train_cfg']['head_empty_cls'] = train_db_vars['empty_label_ids']
    sampler = DistributedSampler(train_dataset, shuffle=True) if args.distributed else None
    train_loader = DataLoader(
        train_dataset,
        batch_size=cfg['loader']['batch_size'],
        num_workers=cfg['loader']['num_workers'],
        collate_fn=trivial_batch_collator,
        worker_init_fn=worker_init_reset_seed,
        shuffle=(sampler is None),
        sampler=sampler,
        drop_last=True,
        generator=rng_generator,
        persistent_workers=True,
        pin_memory=True,
    )
    val_dataset = make_dataset(cfg['dataset_name'], False, cfg['val_split'], **cfg['dataset'])
    val_loader = DataLoader(val_dataset, batch_size=1, num_workers=2, collate_fn=trivial_batch_collator)

    # model
    device = torch.device("cuda", args.local_rank)
    model = make_meta_arch(cfg['model_name'], **cfg['model'])
    if cfg['opt'].get('sync_bn', False) and args.distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model = model.cuda(args.local_rank)
    optimizer = make_optimizer(model, cfg['opt'])
    num_iters_per_epoch = len(train_loader)
    scheduler = make_scheduler(optimizer, cfg['opt'], num_iters_per_epoch)
    scaler = torch.cuda.amp.GradScaler(enabled=cfg['opt'].get('amp', True))

    # enable model EMA (kept on the same GPU as the model)
    model_ema = ModelEma(model) if cfg['opt'].get('ema', True) else None

    if args.distributed:
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank,
                    find_unused_parameters=False, broadcast_buffers=False)

    # resume from a checkpoint?
    if args.resume:
        if os.path.isfile(args.resume):
            checkpoint = torch.load(args.resume,
                                    map_location=lambda storage, loc: storage.cuda(args.local_rank))
            args.start_epoch = checkpoint['epoch']
            model.load_state_dict(checkpoint['state_dict'])
            if model_ema is not None:
                model_ema.module.load_state_dict(checkpoint['state_dict_ema'])
            optimizer.load_state_dict(checkpoint['optimizer'])
            scheduler.load_state_dict(checkpoint['scheduler'])
            scaler.load_state_dict(checkpoint['scaler'])
            print("=> loaded checkpoint '{:s}' (epoch {:d}".format(args.resume, checkpoint['epoch']))
            del checkpoint
        else:
            print("=> no checkpoint found at '{}'".format(args.resume))
            return

    # save the current config
    if get_rank() == 0:
        with open(os.path.join(ckpt_folder, 'config.txt'), 'w') as fid:
            pprint(cfg, stream=fid)
            fid.flush()

    print("\nStart training model {:s} ...".format(cfg['model_name']))
    max_epochs = cfg['opt'].get('early_stop_epochs', cfg['opt']['epochs'] + cfg['opt']['warmup_epochs'])
    evaluator = EventDetectionEvaluator(val_dataset.json_file, val_dataset.split[0],
                                        tiou_thresholds=val_dataset.get_attributes()['tiou_thresholds'])
    best_map = 0.0
    for epoch in range(args.start_epoch, max_epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        train_one_epoch(train_loader, model, optimizer, scheduler, scaler, epoch,
                        model_ema=model_ema,
                        clip_grad_l2norm=cfg['train_cfg']['clip_grad_l2norm'],
                        tb_writer=tb_writer,
                        print_freq=args.print_freq,
                        use_amp=cfg['opt'].get('amp', True),
                        device=device)

        if (epoch + 1) % args.eval_freq == 0 and get_rank() == 0:
            eval_model = model_ema.module if model_ema is not None else model
            mAP = valid_one_epoch(val_loader, eval_model, epoch, evaluator=evaluator,
                                  tb_writer=tb_writer, print_freq=args.print_freq)
            if args.gt_frames:
                auc = frame_level_auc(val_loader, eval_model, np.load(args.gt_frames), device)
                print("[Eval]: frame-level AUC {:.4f}".format(auc))
                if tb_writer is not None:
                    tb_writer.add_scalar('val/frame_auc', auc, epoch)
            is_best = mAP > best_map
            best_map = max(mAP, best_map)
            save_states = {
                'epoch': epoch + 1,
                'state_dict': model.state_dict(),
                'scheduler': scheduler.state_dict(),
                'optimizer': optimizer.state_dict(),
                'scaler': scaler.state_dict(),
            }
            if model_ema is not None:
                save_states['state_dict_ema'] = model_ema.module.state_dict()
            save_checkpoint(save_states, is_best, file_folder=ckpt_folder,
                            file_name='epoch_{:03d}.pth.tar'.format(epoch + 1))
        if args.distributed:
            dist.barrier()

    if tb_writer is not None:
        tb_writer.close()
    if args.distributed:
        dist.destroy_process_group()
    print("All done!")


################################################################################
if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='Train a surveillance event localisation model')
    parser.add_argument('config', metavar='DIR', help='path to a config file')
    parser.add_argument('-p', '--print-freq', default=10, type=int, help='print frequency (default: 10 iterations)')
    parser.add_argument('-c', '--ckpt-freq', default=5, type=int, help='checkpoint frequency (default: every 5 epochs)')
    parser.add_argument('--eval-freq', default=5, type=int)
    parser.add_argument('--output', default='', type=str, help='name of exp folder (default: none)')
    parser.add_argument('--gt-frames', default='', type=str, help='frame-level GT (.npy) for the AUC sanity check')
    parser.add_argument('--resume', default='', type=str, metavar='PATH', help='path to a checkpoint (default: none)')
    args = parser.parse_args()
    main(args)
