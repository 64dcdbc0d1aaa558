#!/usr/bin/env python3
""" Spikformer training script (CIFAR10/100), derived from the timm ImageNet training script.

The SNN state of every MultiStepLIFNode is reset after each forward with functional.reset_net().
"""
import argparse
import time
import yaml
import os
import logging
from collections import OrderedDict
from contextlib import suppress
from datetime import datetime

import torch
import torch.nn as nn
import torchvision.utils
from torch.nn.parallel import DistributedDataParallel as NativeDDP

from timm.data import create_dataset, create_loader, resolve_data_config, Mixup, FastCollateMixup, AugMixDataset
from timm.models import load_checkpoint, create_model, resume_checkpoint, convert_splitbn_model, model_parameters
from timm.utils import *
from timm.loss import LabelSmoothingCrossEntropy, SoftTargetCrossEntropy, JsdCrossEntropy
from timm.optim import create_optimizer_v2, optimizer_kwargs
from timm.scheduler import create_scheduler
from timm.utils import ApexScaler, NativeScaler
from spikingjelly.clock_driven import functional

import model  # noqa: F401  registers 'spikformer'

try:
    from apex import amp
    from apex.parallel import DistributedDataParallel as ApexDDP
    from apex.parallel import convert_syncbn_model
    has_apex = True
except ImportError:
    has_apex = False

has_native_amp = False
try:
    if getattr(torch.cuda.amp, 'autocast') is not None:
        has_native_amp = True
except AttributeError:
    pass

torch.backends.cudnn.benchmark = True
_logger = logging.getLogger('train')

config_parser = parser = argparse.ArgumentParser(description='Training Config', add_help=False)
parser.add_argument('-c', '--config', default='cifar10.yml', type=str, metavar='FILE',
                    help='YAML config file specifying default arguments')

parser = argparse.ArgumentParser(description='PyTorch CIFAR Training')
# Dataset / Model parameters
parser.add_argument('-data-dir', metavar='DIR', default='./data', help='path to dataset')
parser.add_argument('--dataset', '-d', metavar='NAME', default='torch/cifar10', help='dataset type')
parser.add_argument('--model', default='spikformer', type=str, metavar='MODEL', help='Name of model to train')
parser.add_argument('--resume', default='', type=str, metavar='PATH', help='Resume full model and optimizer state')
parser.add_argument('--num-classes', type=int, default=10, metavar='N', help='number of label classes')
parser.add_argument('--time-step', type=int, default=4, metavar='time', help='simulation time step of spiking neuron')
parser.add_argument('--layer', type=int, default=4, metavar='layer', help='number of encoder layers')
parser.add_argument('--dim', type=int, default=None, metavar='N', help='embedding dimension')
parser.add_argument('--num-heads', type=int, default=None, metavar='N', help='attention heads')
parser.add_argument('--patch-size', type=int, default=None, metavar='N', help='Image patch size')
parser.add_argument('--mlp-ratio', type=int, default=None, metavar='N', help='expand ratio of the MLP')
parser.add_argument('--img-size', type=int, default=None, metavar='N', help='Image size')
parser.add_argument('-b', '--batch-size', type=int, default=64, metavar='N', help='input batch size for training')
parser.add_argument('-vb', '--val-batch-size', type=int, default=16, metavar='N', help='input val batch size')
# Optimizer parameters
parser.add_argument('--opt', default='adamw', type=str, metavar='OPTIMIZER', help='Optimizer (default: "adamw"')
parser.add_argument('--momentum', type=float, default=0.9, metavar='M', help='Optimizer momentum (default: 0.9)')
parser.add_argument('--weight-decay', type=float, default=0.06, help='weight decay (default: 0.06)')
parser.add_argument('--clip-grad', type=float, default=None, metavar='NORM', help='Clip gradient norm')
# Learning rate schedule parameters
parser.add_argument('--sched', default='cosine', type=str, metavar='SCHEDULER', help='LR scheduler')
parser.add_argument('--lr', type=float, default=5e-4, metavar='LR', help='learning rate (default: 5e-4)')
parser.add_argument('--epochs', type=int, default=300, metavar='N', help='number of epochs to train (default: 300)')
parser.add_argument('--warmup-epochs', type=int, default=20, metavar='N', help='epochs to warmup LR')
# Augmentation & regularization parameters
parser.add_argument('--mixup', type=float, default=0.5, help='mixup alpha, mixup enabled if > 0.')
parser.add_argument('--cutmix', type=float, default=0.0, help='cutmix alpha, cutmix enabled if > 0.')
parser.add_argument('--smoothing', type=float, default=0.1, help='Label smoothing (default: 0.1)')
parser.add_argument('--drop', type=float, default=0.0, metavar='PCT', help='Dropout rate (default: 0.)')
parser.add_argument('--drop-path', type=float, default=0.2, metavar='PCT', help='Drop path rate (default: None)')
parser.add_argument('--sync-bn', action='store_true', help='Enable NVIDIA Apex or Torch synchronized BatchNorm.')
parser.add_argument('--dist-bn', type=str, default='', help='Distribute BatchNorm stats between nodes after each epoch')
# Misc
parser.add_argument('--seed', type=int, default=42, metavar='S', help='random seed (default: 42)')
parser.add_argument('--log-interval', type=int, default=50, metavar='N', help='how many batches to wait before logging')
parser.add_argument('-j', '--workers', type=int, default=8, metavar='N', help='how many training processes to use')
parser.add_argument('--amp', action='store_true', default=False, help='use NVIDIA Apex AMP or Native AMP for mixed precision training')
parser.add_argument('--apex-amp', action='store_true', default=False, help='Use NVIDIA Apex AMP mixed precision')
parser.add_argument('--native-amp', action='store_true', default=False, help='Use Native Torch AMP mixed precision')
parser.add_argument('--channels-last', action='store_true', default=False, help='Use channels_last memory layout')
parser.add_argument('--pin-mem', action='store_true', default=False, help='Pin CPU memory in DataLoader')
parser.add_argument('--no-prefetcher', action='store_true', default=False, help='disable fast prefetcher')
parser.add_argument('--output', default='', type=str, metavar='PATH', help='path to output folder')
parser.add_argument("--local_rank", default=0, type=int)


def _parse_args():
    args_config, remaining = config_parser.parse_known_args()
    if args_config.config:
        with open(args_config.config, 'r') as f:
            cfg = yaml.safe_load(f)
            parser.set_defaults(**cfg)

    args = parser.parse_args(remaining)

    args_text = yaml.safe_dump(args.__dict__, default_flow_style=False)
    return args, args_text


def main():
    setup_default_logging()
    args, args_text = _parse_args()

    args.prefetcher = not args.no_prefetcher
    args.distributed = False
    if 'WORLD_SIZE' in os.environ:
        args.distributed = int(os.environ['WORLD_SIZE']) > 1
    args.device = 'cuda:0'
    args.world_size = 1
    args.rank = 0  # global rank
    if args.distributed:
        args.device = 'cuda:%d' % args.local_rank
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend='nccl', init_method='env://')
        args.world_size = torch.distributed.get_world_size()
        args.rank = torch.distributed.get_rank()
        _logger.info(f'Training in distributed mode, 1 GPU per process. Process {args.rank}, total {args.world_size}.')
    else:
        _logger.info('Training with a single process on 1 GPUs.')
    assert args.rank >= 0

    # resolve AMP arguments based on PyTorch / Apex availability
    use_amp = None
    if args.amp:
        # `--amp` chooses native amp before apex (APEX ver not actively maintained)
        if has_native_amp:
            args.native_amp = True
        elif has_apex:
            args.apex_amp = True
    if args.apex_amp and has_apex:
        use_amp = 'apex'
    elif args.native_amp and has_native_amp:
        use_amp = 'native'

    random_seed(args.seed, args.rank)

    model = create_model(
        args.model, pretrained=False, drop_rate=args.drop, drop_path_rate=args.drop_path, drop_block_rate=None,
        img_size_h=args.img_size, img_size_w=args.img_size,
        patch_size=args.patch_size, embed_dims=args.dim, num_heads=args.num_heads, mlp_ratios=args.mlp_ratio,
        in_channels=3, num_classes=args.num_classes, qkv_bias=False,
        depths=args.layer, sr_ratios=1,
        T=args.time_step,
    )

    data_config = resolve_data_config(vars(args), model=model, verbose=args.local_rank == 0)

    # move model to GPU, enable channels last layout if set
    model.cuda()
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)

    # setup synchronized BatchNorm for distributed training
    if args.distributed and args.sync_bn:
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)

    optimizer = create_optimizer_v2(model, **optimizer_kwargs(cfg=args))

    # setup automatic mixed-precision (AMP) loss scaling and op casting
    amp_autocast = suppress  # do nothing
    loss_scaler = None
    if use_amp == 'apex':
        model, optimizer = amp.initialize(model, optimizer, opt_level='O1')
        loss_scaler = ApexScaler()
        _logger.info('Using NVIDIA APEX AMP. Training in mixed precision.')
    elif use_amp == 'native':
        amp_autocast = torch.cuda.amp.autocast
        loss_scaler = NativeScaler()
        _logger.info('Using native Torch AMP. Training in mixed precision.')

    resume_epoch = None
    if args.resume:
        resume_epoch = resume_checkpoint(model, args.resume, optimizer=optimizer, loss_scaler=loss_scaler)

    model_ema = None
    # setup distributed training
    if args.distributed:
        if has_apex and use_amp != 'native':
            # Apex DDP preferred unless native amp is activated
            model = ApexDDP(model, delay_allreduce=True)
        else:
            model = NativeDDP(model, device_ids=[args.local_rank])  # can use device str in Torch >= 1.9
        # NOTE: EMA model does not need to be wrapped by DDP

    lr_scheduler, num_epochs = create_scheduler(args, optimizer)
    start_epoch = 0
    if resume_epoch is not None:
        start_epoch = resume_epoch
        lr_scheduler.step(start_epoch)

    dataset_train = create_dataset(args.dataset, root=args.data_dir, split='train', is_training=True,
                                   batch_size=args.batch_size, download=True)
    dataset_eval = create_dataset(args.dataset, root=args.data_dir, split='validation', is_training=False,
                                  batch_size=args.batch_size, download=True)

    # setup mixup / cutmix
    collate_fn, mixup_fn = None, None
    mixup_active = args.mixup > 0 or args.cutmix > 0.
    if mixup_active:
        mixup_args = dict(mixup_alpha=args.mixup, cutmix_alpha=args.cutmix, label_smoothing=args.smoothing,
                          num_classes=args.num_classes)
        if args.prefetcher:
            collate_fn = FastCollateMixup(**mixup_args)
        else:
            mixup_fn = Mixup(**mixup_args)

    loader_train = create_loader(
        dataset_train, input_size=data_config['input_size'], batch_size=args.batch_size,
        is_training=True, use_prefetcher=args.prefetcher, mean=data_config['mean'], std=data_config['std'],
        num_workers=args.workers, distributed=args.distributed, collate_fn=collate_fn, pin_memory=args.pin_mem)
    loader_eval = create_loader(
        dataset_eval, input_size=data_config['input_size'], batch_size=args.val_batch_size, is_training=False,
        use_prefetcher=args.prefetcher, interpolation=data_config['interpolation'], mean=data_config['mean'],
        std=data_config['std'], num_workers=args.workers, distributed=args.distributed,
        crop_pct=data_config['crop_pct'], pin_memory=args.pin_mem)

    if mixup_active:
        # smoothing is handled with mixup target transform
        train_loss_fn = SoftTargetCrossEntropy().cuda()
    elif args.smoothing:
        train_loss_fn = LabelSmoothingCrossEntropy(smoothing=args.smoothing).cuda()
    else:
        train_loss_fn = nn.CrossEntropyLoss().cuda()
    validate_loss_fn = nn.CrossEntropyLoss().cuda()

    # setup checkpoint saver and eval metric tracking
    eval_metric = 'top1'
    best_metric = None
    best_epoch = None
    saver = None
    output_dir = None
    if args.rank == 0:
        exp_name = '-'.join([datetime.now().strftime("%Y%m%d-%H%M%S"), args.model, f"t-{args.time_step}"])
        output_dir = get_outdir(args.output if args.output else './output/train', exp_name)
        saver = CheckpointSaver(model=model, optimizer=optimizer, args=args, amp_scaler=loss_scaler,
                                checkpoint_dir=output_dir, recovery_dir=output_dir, decreasing=False, max_history=5)
        with open(os.path.join(output_dir, 'args.yaml'), 'w') as f:
            f.write(args_text)

    try:
        for epoch in range(start_epoch, num_epochs):
            if args.distributed and hasattr(loader_train.sampler, 'set_epoch'):
                loader_train.sampler.set_epoch(epoch)

            train_metrics = train_one_epoch(
                epoch, model, loader_train, optimizer, train_loss_fn, args,
                lr_scheduler=lr_scheduler, saver=saver, output_dir=output_dir,
                amp_autocast=amp_autocast, loss_scaler=loss_scaler, model_ema=model_ema, mixup_fn=mixup_fn)

            if args.distributed and args.dist_bn in ('broadcast', 'reduce'):
                distribute_bn(model, args.world_size, args.dist_bn == 'reduce')

            eval_metrics = validate(model, loader_eval, validate_loss_fn, args, amp_autocast=amp_autocast)

            if lr_scheduler is not None:
                lr_scheduler.step(epoch + 1, eval_metrics[eval_metric])

            if output_dir is not None:
                update_summary(epoch, train_metrics, eval_metrics, os.path.join(output_dir, 'summary.csv'),
                               write_header=best_metric is None)

            if saver is not None:
                # save proper checkpoint with eval metric
                save_metric = eval_metrics[eval_metric]
                best_metric, best_epoch = saver.save_checkpoint(epoch, metric=save_metric)
                _logger.info('*** Best metric: {0} (epoch {1})'.format(best_metric, best_epoch))

    except KeyboardInterrupt:
        _logger.info('*** Best metric: {0} (epoch {1})'.format(best_metric, best_epoch))


def train_one_epoch(
        epoch, model, loader, optimizer, loss_fn, args,
        lr_scheduler=None, saver=None, output_dir=None, amp_autocast=suppress,
        loss_scaler=None, model_ema=None, mixup_fn=None):

    second_order = hasattr(optimizer, 'is_second_order') and optimizer.is_second_order
    batch_time_m, data_time_m, losses_m = AverageMeter(), AverageMeter(), AverageMeter()

    model.train()

    end = time.time()
    last_idx = len(loader) - 1
    num_updates = epoch * len(loader)
    for batch_idx, (input, target) in enumerate(loader):
        last_batch = batch_idx == last_idx
        data_time_m.update(time.time() - end)
        if not args.prefetcher:
            input, target = input.cuda(), target.cuda()
            if mixup_fn is not None:
                input, target = mixup_fn(input, target)
        if args.channels_last:
            input = input.contiguous(memory_format=torch.channels_last)

        with amp_autocast():
            output = model(input)
            loss = loss_fn(output, target)

        if not args.distributed:
            losses_m.update(loss.item(), input.size(0))

        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(
                loss, optimizer, clip_grad=args.clip_grad,
                parameters=model_parameters(model),
                create_graph=second_order)
        else:
            loss.backward(create_graph=second_order)
            optimizer.step()

        functional.reset_net(model)

        torch.cuda.synchronize()
        num_updates += 1
        batch_time_m.update(time.time() - end)
        if last_batch or batch_idx % args.log_interval == 0:
            lrl = [param_group['lr'] for param_group in optimizer.param_groups]
            lr = sum(lrl) / len(lrl)

            if args.distributed:
                reduced_loss = reduce_tensor(loss.data, args.world_size)
                losses_m.update(reduced_loss.item(), input.size(0))

            if args.local_rank == 0:
                _logger.info(f'Train: {epoch} [{batch_idx:>4d}/{len(loader)}]  Loss: {losses_m.val:>9.6f} '
                             f'({losses_m.avg:>6.4f})  Time: {batch_time_m.val:.3f}s  LR: {lr:.3e}  '
                             f'Data: {data_time_m.val:.3f}')

        if lr_scheduler is not None:
            lr_scheduler.step_update(num_updates=num_updates, metric=losses_m.avg)

        end = time.time()

    return OrderedDict([('loss', losses_m.avg)])


def validate(model, loader, loss_fn, args, amp_autocast=suppress, log_suffix=''):
    batch_time_m, losses_m, top1_m, top5_m = AverageMeter(), AverageMeter(), AverageMeter(), AverageMeter()

    model.eval()

    end = time.time()
    last_idx = len(loader) - 1
    with torch.no_grad():
        for batch_idx, (input, target) in enumerate(loader):
            last_batch = batch_idx == last_idx
            if not args.prefetcher:
                input = input.cuda()
                target = target.cuda()
            if args.channels_last:
                input = input.contiguous(memory_format=torch.channels_last)

            with amp_autocast():
                output = model(input)

            loss = loss_fn(output, target)
            functional.reset_net(model)
            acc1, acc5 = accuracy(output, target, topk=(1, 5))

            if args.distributed:
                reduced_loss = reduce_tensor(loss.data, args.world_size)
                acc1 = reduce_tensor(acc1, args.world_size)
                acc5 = reduce_tensor(acc5, args.world_size)
            else:
                reduced_loss = loss.data

            torch.cuda.synchronize()  # wait for the eval batch before timing it

            losses_m.update(reduced_loss.item(), input.size(0))
            top1_m.update(acc1.item(), output.size(0))
            top5_m.update(acc5.item(), output.size(0))

            batch_time_m.update(time.time() - end)
            end = time.time()
            if args.local_rank == 0 and (last_batch or batch_idx % args.log_interval == 0):
                _logger.info(f'Test{log_suffix}: [{batch_idx:>4d}/{last_idx}]  Loss: {losses_m.avg:>6.4f}  '
                             f'Acc@1: {top1_m.avg:>7.4f}  Acc@5: {top5_m.avg:>7.4f}')

    metrics = OrderedDict([('loss', losses_m.avg), ('top1', top1_m.avg), ('top5', top5_m.avg)])

    return metrics


if __name__ == '__main__':
    main()
