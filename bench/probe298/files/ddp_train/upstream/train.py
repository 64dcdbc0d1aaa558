#!/usr/bin/env python3
""" CheXpert / MIMIC-CXR multi-label training script

Distributed (torch.distributed.launch / torchrun) training of timm backbones on chest
radiographs with BCE-with-logits loss, native AMP, optional EMA and SyncBN.
Adapted from the timm ImageNet train.py; most of the bells and whistles were removed.

Example (8 GPUs):
    ./scripts/train_8gpu.sh configs/densenet121_chexpert.yaml

"""
import argparse
import datetime
import json
import logging
import os
import time
from contextlib import suppress
from functools import partial

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.nn as nn
import yaml
from sklearn.metrics import roc_auc_score
from torch.nn.parallel import DistributedDataParallel as NativeDDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

import timm
from timm.utils import ModelEmaV2

from data.chexpert import CheXpertDataset, build_transforms, CHEXPERT_COMPETITION_TASKS
from utils.dist_utils import init_distributed_mode, is_main_process, get_world_size, reduce_tensor
from utils.misc import MetricLogger, SmoothedValue, NativeScalerWithGradNormCount, seed_everything, save_on_master

try:
    from apex.optimizers import FusedAdam, FusedLAMB
    has_apex = True
except ImportError:
    has_apex = False

try:
    import wandb
    has_wandb = True
except ImportError:
    has_wandb = False

_logger = logging.getLogger('train')

# The first arg parser parses out only the --config argument, this argument is used to
# load a yaml file containing key-values that override the defaults for the main parser below
config_parser = parser = argparse.ArgumentParser(description='Training Config', add_help=False)
parser.add_argument('-c', '--config', default='', type=str, metavar='FILE',
                    help='YAML config file specifying default arguments')

parser = argparse.ArgumentParser(description='CheXpert multi-label training')

# Dataset parameters
group = parser.add_argument_group('Dataset parameters')
group.add_argument('--data-dir', metavar='DIR', default='/datasets/CheXpert-v1.0',
                   help='path to dataset root')
group.add_argument('--uncertainty', default='U-Ones', choices=['U-Ones', 'U-Zeros', 'U-Ignore'],
                   help='how to map uncertain (-1) labels')
group.add_argument('--frontal-only', action='store_true', default=False)
group.add_argument('--img-size', type=int, default=320)

# Model parameters
group = parser.add_argument_group('Model parameters')
group.add_argument('--model', default='densenet121', type=str, metavar='MODEL')
group.add_argument('--pretrained', action='store_true', default=False)
group.add_argument('--num-classes', type=int, default=5, metavar='N')
group.add_argument('--drop-rate', type=float, default=0.0)
group.add_argument('--sync-bn', action='store_true', default=False,
                   help='Enable NVIDIA Apex or Torch synchronized BatchNorm.')
group.add_argument('--channels-last', action='store_true', default=False,
                   help='Use channels_last memory layout')
group.add_argument('--compile', action='store_true', default=False,
                   help='torch.compile the model (PyTorch 2.0+)')

# Optimizer / schedule
group = parser.add_argument_group('Optimizer parameters')
group.add_argument('--opt', default='adamw', type=str, help='adamw | sgd | fusedadam | fusedlamb')
group.add_argument('--lr', type=float, default=1e-4)
group.add_argument('--weight-decay', type=float, default=1e-5)
group.add_argument('--momentum', type=float, default=0.9)
group.add_argument('--clip-grad', type=float, default=None)
group.add_argument('--epochs', type=int, default=10)
group.add_argument('--warmup-epochs', type=int, default=1)
group.add_argument('-b', '--batch-size', type=int, default=32, help='per-GPU batch size')

# Misc
group = parser.add_argument_group('Miscellaneous parameters')
group.add_argument('--amp', action='store_true', default=False,
                   help='use native torch.cuda.amp mixed precision')
group.add_argument('--amp-dtype', default='float16', type=str, help='float16 or bfloat16')
group.add_argument('--model-ema', action='store_true', default=False)
group.add_argument('--model-ema-decay', type=float, default=0.9998)
group.add_argument('--model-ema-force-cpu', action='store_true', default=False)
group.add_argument('--device', default='cuda', help='device to use for training / testing')
group.add_argument('--seed', type=int, default=42)
group.add_argument('-j', '--workers', type=int, default=8)
group.add_argument('--pin-mem', action='store_true', default=True,
                   help='Pin CPU memory in DataLoader for more efficient (sometimes) transfer to GPU.')
group.add_argument('--output', default='./output', type=str)
group.add_argument('--resume', default='', type=str)
group.add_argument('--finetune', default='', type=str, help='init from a checkpoint of another CXR dataset')
group.add_argument('--log-interval', type=int, default=50)
group.add_argument('--log-wandb', action='store_true', default=False)
group.add_argument('--dist-backend', default='nccl', help='distributed backend')
group.add_argument('--dist-url', default='env://', help='url used to set up distributed training')
group.add_argument('--local_rank', '--local-rank', default=0, type=int)


def _parse_args():
    # Do we have a config file to parse?
    args_config, remaining = config_parser.parse_known_args()
    if args_config.config:
        with open(args_config.config, 'r') as f:
            cfg = yaml.safe_load(f)
            parser.set_defaults(**cfg)

    # The main arg parser parses the rest of the args, the usual
    # defaults will have been overridden if config file specified.
    args = parser.parse_args(remaining)

    # Cache the args as a text string to save them in the output dir later
    args_text = yaml.safe_dump(args.__dict__, default_flow_style=False)
    return args, args_text


def masked_bce(logits, targets, ignore_index=-1.0):
    mask = (targets != ignore_index).float()
    loss = nn.functional.binary_cross_entropy_with_logits(logits, targets.clamp(min=0), reduction='none')
    return (loss * mask).sum() / mask.sum().clamp(min=1.0)


def build_optimizer(args, model):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        if p.ndim <= 1 or name.endswith('.bias'):
            no_decay.append(p)
        else:
            decay.append(p)
    params = [{'params': no_decay, 'weight_decay': 0.}, {'params': decay, 'weight_decay': args.weight_decay}]

    opt = args.opt.lower()
    if opt == 'fusedadam':
        assert has_apex, 'APEX and CUDA required for fused optimizers'
        optimizer = FusedAdam(params, lr=args.lr, adam_w_mode=True)
    elif opt == 'fusedlamb':
        assert has_apex, 'APEX and CUDA required for fused optimizers'
        optimizer = FusedLAMB(params, lr=args.lr)
    elif opt == 'sgd':
        optimizer = torch.optim.SGD(params, lr=args.lr, momentum=args.momentum, nesterov=True)
    else:
        optimizer = torch.optim.AdamW(params, lr=args.lr)
    return optimizer


def load_pretrained_backbone(model, path, num_classes):
    """Initialise from a checkpoint trained on another CXR dataset (e.g. MIMIC-CXR -> CheXpert).

    The classifier head is dropped when the number of classes differs; everything else must match.
    """
    ckpt = torch.load(path, map_location='cpu')
    state = ckpt.get('model', ckpt)
    state = {k.replace('module.', '', 1) if k.startswith('module.') else k: v for k, v in state.items()}
    head = model.get_classifier()
    head_keys = [k for k in state if k.startswith('classifier.') or k.startswith('fc.') or k.startswith('head.')]
    if head is not None and head.out_features != num_classes or any(state[k].shape[0] != num_classes
                                                                     for k in head_keys if state[k].ndim >= 1):
        for k in head_keys:
            del state[k]
        _logger.info('Dropped classifier weights from {}: {}'.format(path, head_keys))
    missing, unexpected = model.load_state_dict(state, strict=False)
    _logger.info('Loaded {}: missing={}, unexpected={}'.format(path, missing, unexpected))
    return model


def param_groups_lrd(model, weight_decay=0.05, layer_decay=0.75):
    """Layer-wise lr decay for DenseNet/ResNet style models: deeper blocks get larger lr scales."""
    names = [n for n, _ in model.named_parameters()]
    blocks = sorted({n.split('.')[1] for n in names if n.startswith('features.') and 'block' in n.split('.')[1]})
    num_layers = len(blocks) + 1
    scales = {b: layer_decay ** (num_layers - i - 1) for i, b in enumerate(blocks)}
    groups = {}
    for n, p in model.named_parameters():
        if not p.requires_grad:
            continue
        wd = 0. if p.ndim == 1 or n.endswith('.bias') else weight_decay
        key = n.split('.')[1] if n.startswith('features.') else 'head'
        scale = scales.get(key, 1.0 if key == 'head' else layer_decay ** num_layers)
        gname = '{}_{}'.format(key, 'decay' if wd else 'no_decay')
        if gname not in groups:
            groups[gname] = {'params': [], 'weight_decay': wd, 'lr_scale': scale}
        groups[gname]['params'].append(p)
    return list(groups.values())


def adjust_learning_rate(optimizer, epoch, args):
    """Linear warmup then half-cycle cosine."""
    if epoch < args.warmup_epochs:
        lr = args.lr * epoch / args.warmup_epochs
    else:
        lr = args.lr * 0.5 * (1. + np.cos(np.pi * (epoch - args.warmup_epochs) / (args.epochs - args.warmup_epochs)))
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr * param_group.get('lr_scale', 1.0)
    return lr


def train_one_epoch(model, criterion, loader, optimizer, epoch, args, amp_autocast, loss_scaler, model_ema=None):
    model.train()
    metric_logger = MetricLogger(delimiter='  ')
    metric_logger.add_meter('lr', SmoothedValue(window_size=1, fmt='{value:.6f}'))
    header = 'Epoch: [{}]'.format(epoch)
    num_steps = len(loader)

    for step, (inputs, targets) in enumerate(metric_logger.log_every(loader, args.log_interval, header)):
        adjust_learning_rate(optimizer, epoch + step / num_steps, args)

        inputs, targets = inputs.cuda(non_blocking=True), targets.cuda(non_blocking=True)
        if args.channels_last:
            inputs = inputs.contiguous(memory_format=torch.channels_last)

        with amp_autocast():
            logits = model(inputs)
            loss = criterion(logits, targets)

        loss_value = loss.item()
        if not np.isfinite(loss_value):
            _logger.error('Loss is {}, stopping training'.format(loss_value))
            raise SystemExit(1)

        optimizer.zero_grad(set_to_none=True)
        loss_scaler(loss, optimizer, clip_grad=args.clip_grad, parameters=model.parameters())

        if model_ema is not None:
            model_ema.update(model)

        torch.cuda.synchronize()

        metric_logger.update(loss=loss_value)
        metric_logger.update(lr=optimizer.param_groups[0]['lr'])

    metric_logger.synchronize_between_processes()
    _logger.info('Averaged stats: {}'.format(metric_logger))
    return {k: meter.global_avg for k, meter in metric_logger.meters.items()}


@torch.no_grad()
def evaluate(model, loader, device, args, amp_autocast, class_names):
    model.eval()
    preds, gts = [], []
    for inputs, targets in loader:
        inputs = inputs.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with amp_autocast():
            logits = model(inputs)
        preds.append(torch.sigmoid(logits.float()))
        gts.append(targets)
    preds = torch.cat(preds)
    gts = torch.cat(gts)

    if args.distributed:
        # validation sampler pads to an even split, so gather and trim
        world_size = get_world_size()
        all_preds = [torch.zeros_like(preds) for _ in range(world_size)]
        all_gts = [torch.zeros_like(gts) for _ in range(world_size)]
        dist.all_gather(all_preds, preds)
        dist.all_gather(all_gts, gts)
        preds = torch.cat(all_preds)[:len(loader.dataset)]
        gts = torch.cat(all_gts)[:len(loader.dataset)]

    preds = preds.cpu().numpy()
    gts = gts.cpu().numpy()
    aucs = {}
    for i, name in enumerate(class_names):
        valid = gts[:, i] >= 0
        if len(np.unique(gts[valid, i])) < 2:
            continue
        aucs[name] = roc_auc_score(gts[valid, i], preds[valid, i])
    aucs['mean'] = float(np.mean(list(aucs.values()))) if aucs else float('nan')
    return aucs


def main():
    args, args_text = _parse_args()
    logging.basicConfig(level=logging.INFO, format='%(asctime)s %(name)s %(levelname)s: %(message)s')

    if 'WORLD_SIZE' in os.environ and int(os.environ['WORLD_SIZE']) > 1 and args.dist_backend == 'nccl':
        # surface NCCL errors instead of hanging forever in a collective
        os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')
    init_distributed_mode(args)

    device = torch.device(args.device)
    seed_everything(args.seed + args.rank)

    cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    amp_dtype = torch.float16
    if args.amp_dtype == 'bfloat16':
        assert torch.cuda.is_bf16_supported(), 'bfloat16 AMP needs an Ampere or newer GPU'
        amp_dtype = torch.bfloat16
    if args.amp:
        amp_autocast = partial(torch.autocast, device_type='cuda', dtype=amp_dtype)
    else:
        amp_autocast = suppress
    loss_scaler = NativeScalerWithGradNormCount(enabled=args.amp and amp_dtype == torch.float16)

    # datasets
    train_tf, val_tf = build_transforms(args.img_size)
    dataset_train = CheXpertDataset(args.data_dir, 'train', transform=train_tf, uncertainty=args.uncertainty,
                                    frontal_only=args.frontal_only)
    dataset_val = CheXpertDataset(args.data_dir, 'valid', transform=val_tf, uncertainty='U-Zeros',
                                  frontal_only=args.frontal_only)
    class_names = CHEXPERT_COMPETITION_TASKS

    if args.distributed:
        sampler_train = DistributedSampler(dataset_train, num_replicas=args.world_size, rank=args.rank, shuffle=True)
        sampler_val = DistributedSampler(dataset_val, num_replicas=args.world_size, rank=args.rank, shuffle=False)
    else:
        sampler_train = torch.utils.data.RandomSampler(dataset_train)
        sampler_val = torch.utils.data.SequentialSampler(dataset_val)

    loader_train = DataLoader(dataset_train, sampler=sampler_train, batch_size=args.batch_size,
                              num_workers=args.workers, pin_memory=args.pin_mem, drop_last=True,
                              persistent_workers=args.workers > 0)
    loader_val = DataLoader(dataset_val, sampler=sampler_val, batch_size=args.batch_size * 2,
                            num_workers=args.workers, pin_memory=args.pin_mem, drop_last=False)

    # model
    model = timm.create_model(args.model, pretrained=args.pretrained, num_classes=args.num_classes,
                              drop_rate=args.drop_rate, in_chans=3)
    if args.finetune:
        load_pretrained_backbone(model, args.finetune, args.num_classes)
    if args.sync_bn and args.distributed:
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model.cuda()
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)

    model_ema = None
    if args.model_ema:
        # Important to create EMA model after cuda(), DP wrapper, and AMP but before DDP wrapper
        model_ema = ModelEmaV2(model, decay=args.model_ema_decay,
                               device='cpu' if args.model_ema_force_cpu else None)

    optimizer = build_optimizer(args, model)
    criterion = masked_bce if args.uncertainty == 'U-Ignore' else nn.BCEWithLogitsLoss()

    start_epoch = 0
    best_auc = 0.0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location='cpu')
        model.load_state_dict(checkpoint['model'])
        optimizer.load_state_dict(checkpoint['optimizer'])
        if 'scaler' in checkpoint:
            loss_scaler.load_state_dict(checkpoint['scaler'])
        if model_ema is not None and 'model_ema' in checkpoint:
            model_ema.module.load_state_dict(checkpoint['model_ema'])
        start_epoch = checkpoint['epoch'] + 1
        best_auc = checkpoint.get('best_auc', 0.0)
        _logger.info('Resumed from {} (epoch {})'.format(args.resume, start_epoch))

    if args.compile:
        model = torch.compile(model, mode='max-autotune')

    model_without_ddp = model
    if args.distributed:
        model = NativeDDP(model, device_ids=[args.gpu], broadcast_buffers=False)
        model_without_ddp = model.module

    n_params = sum(p.numel() for p in model_without_ddp.parameters() if p.requires_grad)
    _logger.info('Model {} created, param count: {:.1f}M'.format(args.model, n_params / 1e6))

    if is_main_process():
        os.makedirs(args.output, exist_ok=True)
        with open(os.path.join(args.output, 'args.yaml'), 'w') as f:
            f.write(args_text)
        if args.log_wandb and has_wandb:
            wandb.init(project='chexpert', config=args)

    _logger.info('Start training for {} epochs'.format(args.epochs))
    start_time = time.time()
    for epoch in range(start_epoch, args.epochs):
        if args.distributed:
            sampler_train.set_epoch(epoch)

        train_stats = train_one_epoch(model, criterion, loader_train, optimizer, epoch, args,
                                      amp_autocast, loss_scaler, model_ema=model_ema)
        val_aucs = evaluate(model, loader_val, device, args, amp_autocast, class_names)
        ema_aucs = None
        if model_ema is not None and not args.model_ema_force_cpu:
            ema_aucs = evaluate(model_ema.module, loader_val, device, args, amp_autocast, class_names)

        is_best = val_aucs['mean'] > best_auc
        best_auc = max(best_auc, val_aucs['mean'])
        max_mem = torch.cuda.max_memory_allocated() / 1024.0 / 1024.0
        _logger.info('Epoch {}: val mean AUC {:.4f} (best {:.4f}), max mem {:.0f}MB'.format(
            epoch, val_aucs['mean'], best_auc, max_mem))

        to_save = {
            'model': model_without_ddp.state_dict(),
            'optimizer': optimizer.state_dict(),
            'scaler': loss_scaler.state_dict(),
            'epoch': epoch,
            'best_auc': best_auc,
            'args': vars(args),
        }
        if model_ema is not None:
            to_save['model_ema'] = model_ema.module.state_dict()
        save_on_master(to_save, os.path.join(args.output, 'checkpoint-last.pth'))
        if is_best:
            save_on_master(to_save, os.path.join(args.output, 'checkpoint-best.pth'))

        log_stats = {**{f'train_{k}': v for k, v in train_stats.items()},
                     **{f'val_auc_{k}': v for k, v in val_aucs.items()},
                     'epoch': epoch}
        if ema_aucs is not None:
            log_stats.update({f'ema_auc_{k}': v for k, v in ema_aucs.items()})
        if is_main_process():
            with open(os.path.join(args.output, 'log.txt'), 'a') as f:
                f.write(json.dumps(log_stats) + '\n')
            if args.log_wandb and has_wandb:
                wandb.log(log_stats)

    total_time = time.time() - start_time
    total_time_str = str(datetime.timedelta(seconds=int(total_time)))
    _logger.info('Training time {}'.format(total_time_str))

    if args.distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
