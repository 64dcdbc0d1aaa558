# encoding: utf-8
"""
Distributed training entry for vehicle re-identification
(AI City Challenge track 2, VeRi-776, VehicleID).

Launch with
    python -m torch.distributed.launch --nproc_per_node=4 tools/train_vehicle.py \
        --config_file configs/aicity21/r50_ibn_gnn.yml

Mixed precision and the fused SGD come from NVIDIA apex (built with --cuda_ext);
when apex is missing the script silently falls back to fp32 + torch.optim.SGD.
"""
import argparse
import logging
import os
import random
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.backends import cudnn
from torch.nn.parallel import DistributedDataParallel

sys.path.append('.')
from reid.config import cfg
from reid.data import make_data_loader
from reid.engine.inference import inference
from reid.losses import make_loss
from reid.modeling import build_model
from reid.solver import make_lr_scheduler, build_param_groups
from reid.utils.checkpoint import Checkpointer
from reid.utils.logger import setup_logger
from reid.utils.meters import AverageMeter

try:
    from apex import amp
    from apex.parallel import convert_syncbn_model
    from apex.optimizers import FusedSGD
    APEX_AVAILABLE = True
except ImportError:
    APEX_AVAILABLE = False


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def build_optimizer(cfg, model):
    params = build_param_groups(cfg, model)
    if cfg.SOLVER.OPTIMIZER_NAME == 'SGD':
        if APEX_AVAILABLE and cfg.SOLVER.FUSED:
            optimizer = FusedSGD(params, lr=cfg.SOLVER.BASE_LR, momentum=cfg.SOLVER.MOMENTUM, nesterov=True)
        else:
            optimizer = torch.optim.SGD(params, lr=cfg.SOLVER.BASE_LR, momentum=cfg.SOLVER.MOMENTUM, nesterov=True)
    elif cfg.SOLVER.OPTIMIZER_NAME == 'Adam':
        optimizer = torch.optim.Adam(params, lr=cfg.SOLVER.BASE_LR, weight_decay=cfg.SOLVER.WEIGHT_DECAY)
    else:
        raise ValueError('Unknown optimizer {}'.format(cfg.SOLVER.OPTIMIZER_NAME))
    return optimizer


def train_one_epoch(cfg, model, loader, optimizer, loss_fn, scheduler, epoch, logger, use_amp):
    model.train()
    losses = AverageMeter()
    accs = AverageMeter()
    batch_time = AverageMeter()
    end = time.time()
    for it, (imgs, pids, camids, _) in enumerate(loader):
        imgs = imgs.cuda(non_blocking=True)
        pids = pids.cuda(non_blocking=True)

        logits, feats = model(imgs)
        loss = loss_fn(logits, feats, pids)

        optimizer.zero_grad()
        if use_amp:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if cfg.SOLVER.GRAD_CLIP > 0:
            params = amp.master_params(optimizer) if use_amp else model.parameters()
            torch.nn.utils.clip_grad_norm_(params, cfg.SOLVER.GRAD_CLIP)
        optimizer.step()
        scheduler.step()

        acc = (logits.max(1)[1] == pids).float().mean()
        losses.update(loss.item(), imgs.size(0))
        accs.update(acc.item(), imgs.size(0))
        batch_time.update(time.time() - end)
        end = time.time()

        if (it + 1) % cfg.SOLVER.LOG_PERIOD == 0 and (not dist.is_initialized() or dist.get_rank() == 0):
            mem = torch.cuda.max_memory_allocated() / (1024.0 ** 2)
            logger.info(
                'Epoch[{}] Iter[{}/{}] loss {:.3f} acc {:.3f} lr {:.2e} {:.3f}s/it mem {:.0f}MB'.format(
                    epoch, it + 1, len(loader), losses.avg, accs.avg,
                    optimizer.param_groups[0]['lr'], batch_time.avg, mem))


def main():
    parser = argparse.ArgumentParser(description='Vehicle ReID distributed training')
    parser.add_argument('--config_file', default='', type=str)
    parser.add_argument('--local_rank', default=0, type=int)
    parser.add_argument('opts', default=None, nargs=argparse.REMAINDER)
    args = parser.parse_args()

    if args.config_file:
        cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    cfg.freeze()

    num_gpus = int(os.environ.get('WORLD_SIZE', 1))
    distributed = num_gpus > 1
    if distributed:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend='nccl', init_method='env://')
        dist.barrier()

    seed_everything(cfg.SOLVER.SEED + args.local_rank)
    cudnn.benchmark = True

    output_dir = cfg.OUTPUT_DIR
    os.makedirs(output_dir, exist_ok=True)
    logger = setup_logger('reid', output_dir, args.local_rank)
    logger.info('Using {} GPUs, apex available: {}'.format(num_gpus, APEX_AVAILABLE))
    logger.info('Running with config:\n{}'.format(cfg))

    train_loader, val_loader, num_query, num_classes = make_data_loader(cfg, distributed=distributed)

    model = build_model(cfg, num_classes)
    if distributed and cfg.MODEL.SYNC_BN:
        if APEX_AVAILABLE:
            model = convert_syncbn_model(model)
        else:
            model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model.cuda()

    optimizer = build_optimizer(cfg, model)
    loss_fn = make_loss(cfg, num_classes)

    use_amp = APEX_AVAILABLE and cfg.SOLVER.FP16
    if use_amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level=cfg.SOLVER.OPT_LEVEL, loss_scale='dynamic')

    if distributed:
        model = DistributedDataParallel(model, device_ids=[args.local_rank], output_device=args.local_rank,
                                        find_unused_parameters=False)

    scheduler = make_lr_scheduler(cfg, optimizer, len(train_loader))
    checkpointer = Checkpointer(model, optimizer, scheduler, output_dir, save_to_disk=(args.local_rank == 0))
    start_epoch = checkpointer.resume_or_load(cfg.MODEL.PRETRAIN_PATH, resume=cfg.MODEL.RESUME)

    for epoch in range(start_epoch, cfg.SOLVER.MAX_EPOCHS):
        if distributed:
            train_loader.sampler.set_epoch(epoch)
        train_one_epoch(cfg, model, train_loader, optimizer, loss_fn, scheduler, epoch, logger, use_amp)

        if args.local_rank == 0 and (epoch + 1) % cfg.SOLVER.CHECKPOINT_PERIOD == 0:
            checkpointer.save('model_{:03d}'.format(epoch + 1), epoch=epoch + 1)

        if (epoch + 1) % cfg.SOLVER.EVAL_PERIOD == 0 and args.local_rank == 0:
            inference(cfg, model.module if distributed else model, val_loader, num_query)
            torch.cuda.empty_cache()

        if distributed:
            dist.barrier()

    logger.info('Training finished, checkpoints in {}'.format(output_dir))


if __name__ == '__main__':
    main()
