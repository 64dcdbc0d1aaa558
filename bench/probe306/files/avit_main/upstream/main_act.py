# Copyright (c) 2021-2022, NVIDIA Corporation & Affiliates. All rights reserved.
#
# This work is made available under the Nvidia Source Code License-NC.
# To view a copy of this license, visit
# https://github.com/NVlabs/A-ViT/blob/master/LICENSE
#
# Based on DeiT (https://github.com/facebookresearch/deit), Apache-2.0.
import argparse
import datetime
import json
import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import yaml
from torch.utils.tensorboard import SummaryWriter

from timm.data import Mixup
from timm.models import create_model
from timm.loss import LabelSmoothingCrossEntropy, SoftTargetCrossEntropy
from timm.scheduler import create_scheduler
from timm.optim import create_optimizer
from timm.utils import NativeScaler, get_state_dict, ModelEma

from datasets import build_dataset
from engine_act import train_one_epoch, evaluate
from losses import DistillationLoss
from samplers import RASampler
import utils
import timm.models.act_vision_transformer  # noqa: F401  (registers avit_* models)


def get_args_parser():
    parser = argparse.ArgumentParser('A-ViT training and evaluation script', add_help=False)
    parser.add_argument('--config', default='', type=str, help='YAML file with default arguments')
    parser.add_argument('--batch-size', default=128, type=int, help='per-GPU batch size')
    parser.add_argument('--epochs', default=100, type=int)

    # Model parameters
    parser.add_argument('--model', default='avit_small_patch16_224', type=str, metavar='MODEL')
    parser.add_argument('--input-size', default=224, type=int, help='images input size')
    parser.add_argument('--drop', type=float, default=0.0, metavar='PCT')
    parser.add_argument('--drop-path', type=float, default=0.1, metavar='PCT')
    parser.add_argument('--pretrained', action='store_true', help='start from the DeiT checkpoint')

    parser.add_argument('--model-ema', action='store_true')
    parser.add_argument('--no-model-ema', action='store_false', dest='model_ema')
    parser.set_defaults(model_ema=False)
    parser.add_argument('--model-ema-decay', type=float, default=0.99996, help='')
    parser.add_argument('--model-ema-force-cpu', action='store_true', default=False, help='')

    # Optimizer / schedule (timm)
    parser.add_argument('--opt', default='adamw', type=str, metavar='OPTIMIZER')
    parser.add_argument('--opt-eps', default=1e-8, type=float, metavar='EPSILON')
    parser.add_argument('--opt-betas', default=None, type=float, nargs='+', metavar='BETA')
    parser.add_argument('--clip-grad', type=float, default=None, metavar='NORM')
    parser.add_argument('--momentum', type=float, default=0.9, metavar='M')
    parser.add_argument('--weight-decay', type=float, default=0.05)
    parser.add_argument('--sched', default='cosine', type=str, metavar='SCHEDULER')
    parser.add_argument('--lr', type=float, default=5e-4, metavar='LR')
    parser.add_argument('--lr-noise', type=float, nargs='+', default=None, metavar='pct, pct')
    parser.add_argument('--lr-noise-pct', type=float, default=0.67, metavar='PERCENT')
    parser.add_argument('--lr-noise-std', type=float, default=1.0, metavar='STDDEV')
    parser.add_argument('--warmup-lr', type=float, default=1e-6, metavar='LR')
    parser.add_argument('--min-lr', type=float, default=1e-5, metavar='LR')
    parser.add_argument('--decay-epochs', type=float, default=30, metavar='N')
    parser.add_argument('--warmup-epochs', type=int, default=5, metavar='N')
    parser.add_argument('--cooldown-epochs', type=int, default=10, metavar='N')
    parser.add_argument('--patience-epochs', type=int, default=10, metavar='N')
    parser.add_argument('--decay-rate', '--dr', type=float, default=0.1, metavar='RATE')

    # Augmentation / regularisation
    parser.add_argument('--color-jitter', type=float, default=0.4, metavar='PCT')
    parser.add_argument('--aa', type=str, default='rand-m9-mstd0.5-inc1', metavar='NAME')
    parser.add_argument('--smoothing', type=float, default=0.1)
    parser.add_argument('--train-interpolation', type=str, default='bicubic')
    parser.add_argument('--repeated-aug', action='store_true')
    parser.add_argument('--no-repeated-aug', action='store_false', dest='repeated_aug')
    parser.set_defaults(repeated_aug=True)
    parser.add_argument('--reprob', type=float, default=0.25, metavar='PCT')
    parser.add_argument('--remode', type=str, default='pixel')
    parser.add_argument('--recount', type=int, default=1)
    parser.add_argument('--resplit', action='store_true', default=False)
    parser.add_argument('--mixup', type=float, default=0.8)
    parser.add_argument('--cutmix', type=float, default=1.0)
    parser.add_argument('--cutmix-minmax', type=float, nargs='+', default=None)
    parser.add_argument('--mixup-prob', type=float, default=1.0)
    parser.add_argument('--mixup-switch-prob', type=float, default=0.5)
    parser.add_argument('--mixup-mode', type=str, default='batch')

    # Dataset
    parser.add_argument('--data-path', default='/datasets/imagenet', type=str)
    parser.add_argument('--data-set', default='IMNET', choices=['CIFAR', 'IMNET', 'INAT', 'INAT19'], type=str)
    parser.add_argument('--inat-category', default='name', type=str)
    parser.add_argument('--output_dir', default='', help='path where to save, empty for no saving')
    parser.add_argument('--tensorboard_dir', default='', help='tensorboard log dir, empty = output_dir/tb')
    parser.add_argument('--device', default='cuda', help='device to use for training / testing')
    parser.add_argument('--seed', default=0, type=int)
    parser.add_argument('--resume', default='', help='resume from checkpoint')
    parser.add_argument('--start_epoch', default=0, type=int, metavar='N')
    parser.add_argument('--eval', action='store_true', help='Perform evaluation only')
    parser.add_argument('--dist-eval', action='store_true', default=False)
    parser.add_argument('--num_workers', default=10, type=int)
    parser.add_argument('--pin-mem', action='store_true')
    parser.add_argument('--no-pin-mem', action='store_false', dest='pin_mem')
    parser.set_defaults(pin_mem=True)
    parser.add_argument('--amp', action='store_true', help='mixed precision with torch.cuda.amp')
    parser.add_argument('--no-amp', action='store_false', dest='amp')
    parser.set_defaults(amp=True)

    # distributed
    parser.add_argument('--local_rank', default=0, type=int, help='set by torch.distributed.launch')
    parser.add_argument('--world_size', default=1, type=int)
    parser.add_argument('--dist_url', default='env://')

    # A-ViT
    parser.add_argument('--act_mode', default=4, type=int, help='4 = token-level adaptive halting')
    parser.add_argument('--gate_scale', default=10., type=float)
    parser.add_argument('--gate_center', default=30., type=float)
    parser.add_argument('--ponder_token_scale', default=5e-4, type=float)
    parser.add_argument('--distr_prior_alpha', default=0.01, type=float)
    parser.add_argument('--distr_target_depth', default=7., type=float)
    return parser


def setup_distributed(args):
    if 'WORLD_SIZE' in os.environ:
        args.world_size = int(os.environ['WORLD_SIZE'])
    args.distributed = args.world_size > 1
    if 'LOCAL_RANK' in os.environ:
        args.local_rank = int(os.environ['LOCAL_RANK'])
    args.gpu = args.local_rank

    if not args.distributed:
        args.rank = 0
        return

    torch.cuda.set_device(args.local_rank)
    torch.distributed.init_process_group(backend='nccl', init_method=args.dist_url)
    args.rank = torch.distributed.get_rank()
    torch.distributed.barrier()
    utils.setup_for_distributed(args.rank == 0)
    print(f'| distributed init (rank {args.rank}, local {args.local_rank}, '
          f'{torch.cuda.device_count()} GPUs visible)', flush=True)


def main(args):
    setup_distributed(args)
    print(args)

    device = torch.device(args.device)

    seed = args.seed + utils.get_rank()
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    np.random.seed(seed)
    cudnn.benchmark = True

    dataset_train, args.nb_classes = build_dataset(is_train=True, args=args)
    dataset_val, _ = build_dataset(is_train=False, args=args)

    num_tasks = utils.get_world_size()
    global_rank = utils.get_rank()
    if args.repeated_aug:
        sampler_train = RASampler(dataset_train, num_replicas=num_tasks, rank=global_rank, shuffle=True)
    else:
        sampler_train = torch.utils.data.DistributedSampler(
            dataset_train, num_replicas=num_tasks, rank=global_rank, shuffle=True)
    if args.dist_eval:
        sampler_val = torch.utils.data.DistributedSampler(
            dataset_val, num_replicas=num_tasks, rank=global_rank, shuffle=False)
    else:
        sampler_val = torch.utils.data.SequentialSampler(dataset_val)

    loader_kwargs = dict(num_workers=args.num_workers, pin_memory=args.pin_mem)
    data_loader_train = torch.utils.data.DataLoader(
        dataset_train, sampler=sampler_train, batch_size=args.batch_size, drop_last=True, **loader_kwargs)
    data_loader_val = torch.utils.data.DataLoader(
        dataset_val, sampler=sampler_val, batch_size=int(1.5 * args.batch_size), drop_last=False, **loader_kwargs)

    mixup_fn = None
    mixup_active = args.mixup > 0 or args.cutmix > 0. or args.cutmix_minmax is not None
    if mixup_active:
        mixup_fn = Mixup(
            mixup_alpha=args.mixup, cutmix_alpha=args.cutmix, cutmix_minmax=args.cutmix_minmax,
            prob=args.mixup_prob, switch_prob=args.mixup_switch_prob, mode=args.mixup_mode,
            label_smoothing=args.smoothing, num_classes=args.nb_classes)

    print(f"Creating model: {args.model}")
    model = create_model(
        args.model,
        pretrained=args.pretrained,
        num_classes=args.nb_classes,
        drop_rate=args.drop,
        drop_path_rate=args.drop_path,
        args=args,
    )
    model.to(device)

    model_ema = None
    if args.model_ema:
        model_ema = ModelEma(model, decay=args.model_ema_decay,
                             device='cpu' if args.model_ema_force_cpu else '', resume='')

    model_without_ddp = model
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        model_without_ddp = model.module
    n_parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print('number of params:', n_parameters)

    linear_scaled_lr = args.lr * args.batch_size * utils.get_world_size() / 512.0
    args.lr = linear_scaled_lr
    optimizer = create_optimizer(args, model_without_ddp)
    loss_scaler = NativeScaler()
    lr_scheduler, _ = create_scheduler(args, optimizer)

    if args.mixup > 0.:
        criterion = SoftTargetCrossEntropy()
    elif args.smoothing:
        criterion = LabelSmoothingCrossEntropy(smoothing=args.smoothing)
    else:
        criterion = torch.nn.CrossEntropyLoss()
    criterion = DistillationLoss(criterion, None, 'none', 0., 0.)

    output_dir = Path(args.output_dir)
    tf_writer = None
    if args.output_dir and utils.is_main_process():
        tb_dir = args.tensorboard_dir or str(output_dir / 'tb')
        tf_writer = SummaryWriter(log_dir=tb_dir)

    if args.resume:
        checkpoint = torch.load(args.resume, map_location='cpu')
        model_without_ddp.load_state_dict(checkpoint['model'])
        if not args.eval and 'optimizer' in checkpoint and 'epoch' in checkpoint:
            optimizer.load_state_dict(checkpoint['optimizer'])
            lr_scheduler.load_state_dict(checkpoint['lr_scheduler'])
            args.start_epoch = checkpoint['epoch'] + 1
            if 'scaler' in checkpoint:
                loss_scaler.load_state_dict(checkpoint['scaler'])

    if args.eval:
        test_stats = evaluate(data_loader_val, model, device, args=args)
        print(f"Accuracy of the network on the {len(dataset_val)} test images: {test_stats['acc1']:.1f}%")
        return

    print(f"Start training for {args.epochs} epochs")
    start_time = time.time()
    max_accuracy = 0.0
    for epoch in range(args.start_epoch, args.epochs):
        if args.distributed:
            data_loader_train.sampler.set_epoch(epoch)

        train_stats = train_one_epoch(
            model, criterion, data_loader_train, optimizer, device, epoch, loss_scaler,
            args.clip_grad, model_ema, mixup_fn, set_training_mode=True, args=args, tf_writer=tf_writer)

        lr_scheduler.step(epoch)
        if args.output_dir:
            utils.save_on_master({
                'model': model_without_ddp.state_dict(),
                'optimizer': optimizer.state_dict(),
                'lr_scheduler': lr_scheduler.state_dict(),
                'epoch': epoch,
                'model_ema': get_state_dict(model_ema) if model_ema is not None else None,
                'scaler': loss_scaler.state_dict(),
                'args': args,
            }, output_dir / 'checkpoint.pth')

        test_stats = evaluate(data_loader_val, model, device, epoch=epoch, tf_writer=tf_writer, args=args)
        print(f"Accuracy of the network on the {len(dataset_val)} test images: {test_stats['acc1']:.1f}%")
        max_accuracy = max(max_accuracy, test_stats["acc1"])
        print(f'Max accuracy: {max_accuracy:.2f}%')
        torch.cuda.empty_cache()

        log_stats = {**{f'train_{k}': v for k, v in train_stats.items()},
                     **{f'test_{k}': v for k, v in test_stats.items()},
                     'epoch': epoch, 'n_parameters': n_parameters}
        if args.output_dir and utils.is_main_process():
            with (output_dir / "log.txt").open("a") as f:
                f.write(json.dumps(log_stats) + "\n")

    total_time = time.time() - start_time
    print('Training time {}'.format(str(datetime.timedelta(seconds=int(total_time)))))


if __name__ == '__main__':
    parser = argparse.ArgumentParser('A-ViT training and evaluation script', parents=[get_args_parser()])
    args, _ = parser.parse_known_args()
    if args.config:
        with open(args.config) as f:
            parser.set_defaults(**yaml.safe_load(f))
    args = parser.parse_args()
    if args.output_dir:
        Path(args.output_dir).mkdir(parents=True, exist_ok=True)
    main(args)
