"""ImageNet adversarial training (PGD / TRADES) for timm models.

Launch with torchrun, one process per GPU:

    torchrun --nproc_per_node=8 robust_training/adversarial_training.py \
        --configs robust_training/configs/swin_base_at.yaml
"""
import argparse
import logging
import os
import time
from collections import OrderedDict
from contextlib import suppress
from functools import partial

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
import yaml
from timm.data import Mixup, create_loader, resolve_data_config
from timm.data.dataset import ImageDataset
from timm.loss import LabelSmoothingCrossEntropy, SoftTargetCrossEntropy
from timm.models import create_model, load_checkpoint
from timm.optim import create_optimizer_v2
from timm.scheduler import create_scheduler
from timm.utils import (AverageMeter, ModelEmaV2, NativeScaler, accuracy,
                        distribute_bn, reduce_tensor)
from torch.nn.parallel import DistributedDataParallel as NativeDDP

_logger = logging.getLogger('adv_train')


def get_args():
    parser = argparse.ArgumentParser('robust training')
    parser.add_argument('--configs', default='', type=str)
    parser.add_argument('--local_rank', '--local-rank', default=int(os.environ.get('LOCAL_RANK', 0)), type=int)
    args, _ = parser.parse_known_args()
    with open(args.configs) as f:
        cfg = yaml.safe_load(f)
    # `env:` entries are exported before any device is touched
    for k, v in (cfg.pop('env', None) or {}).items():
        os.environ.setdefault(k, str(v))
    for section in cfg.values():
        if isinstance(section, dict):
            for k, v in section.items():
                setattr(args, k, v)
    return args


def init_distributed(args):
    args.distributed = int(os.environ.get('WORLD_SIZE', 1)) > 1
    args.device = 'cuda:0'
    args.world_size = 1
    args.rank = 0
    if args.distributed:
        os.environ.setdefault('NCCL_ASYNC_ERROR_HANDLING', '1')
        args.device = 'cuda:%d' % args.local_rank
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend=getattr(args, 'dist_backend', 'nccl'), init_method=getattr(args, 'dist_url', 'env://'))
        args.world_size = dist.get_world_size()
        args.rank = dist.get_rank()
        _logger.info('Training in distributed mode with multiple processes, 1 GPU per process. '
                     f'Process {args.rank}, total {args.world_size}.')
    else:
        _logger.info('Training with a single process on 1 GPU.')
    assert args.rank >= 0


def pgd_attack(model, images, labels, eps, alpha, steps, amp_autocast, trades=False):
    """L_inf PGD with a random start; images are in [0, 1] (normalisation is inside the model)."""
    was_training = model.training
    model.eval()
    delta = torch.empty_like(images).uniform_(-eps, eps)
    delta = torch.clamp(images + delta, 0, 1) - images
    if trades:
        with torch.no_grad(), amp_autocast():
            nat_prob = F.softmax(model(images), dim=1)
    for _ in range(steps):
        delta.requires_grad_(True)
        with amp_autocast():
            logits = model(images + delta)
            if trades:
                loss = F.kl_div(F.log_softmax(logits, dim=1), nat_prob, reduction='sum')
            else:
                loss = F.cross_entropy(logits, labels)
        grad = torch.autograd.grad(loss, [delta])[0]
        delta = delta.detach() + alpha * grad.sign()
        delta = torch.clamp(delta, -eps, eps)
        delta = torch.clamp(images + delta, 0, 1) - images
    model.train(was_training)
    return (images + delta).detach()


def train_one_epoch(epoch, model, loader, optimizer, loss_fn, args, lr_scheduler=None,
                    amp_autocast=suppress, loss_scaler=None, model_ema=None, mixup_fn=None):
    batch_time_m = AverageMeter()
    losses_m = AverageMeter()
    model.train()
    end = time.time()
    last_idx = len(loader) - 1
    num_updates = epoch * len(loader)
    for batch_idx, (images, target) in enumerate(loader):
        images = images.to(args.device, non_blocking=True)
        target = target.to(args.device, non_blocking=True)
        if mixup_fn is not None:
            images, target = mixup_fn(images, target)

        adv_images = pgd_attack(model, images, target, args.attack_eps / 255., args.attack_step / 255.,
                                args.attack_it, amp_autocast, trades=args.trades)
        with amp_autocast():
            output = model(adv_images)
            loss = loss_fn(output, target)

        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(loss, optimizer, clip_grad=args.clip_grad, parameters=model.parameters())
        else:
            loss.backward()
            if args.clip_grad is not None:
                nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
            optimizer.step()

        if model_ema is not None:
            model_ema.update(model)

        torch.cuda.synchronize()
        num_updates += 1
        batch_time_m.update(time.time() - end)
        if not args.distributed:
            losses_m.update(loss.item(), images.size(0))
        if batch_idx == last_idx or batch_idx % args.log_interval == 0:
            if args.distributed:
                reduced_loss = reduce_tensor(loss.data, args.world_size)
                losses_m.update(reduced_loss.item(), images.size(0))
            if args.rank == 0:
                lr = optimizer.param_groups[0]['lr']
                mem_gb = torch.cuda.max_memory_allocated() / 1024 ** 3
                _logger.info(f'Train: {epoch} [{batch_idx}/{last_idx}] loss {losses_m.avg:.4f} '
                             f'lr {lr:.3e} time {batch_time_m.avg:.3f}s mem {mem_gb:.1f}GB')
        if lr_scheduler is not None:
            lr_scheduler.step_update(num_updates=num_updates, metric=losses_m.avg)
        end = time.time()
    return OrderedDict([('loss', losses_m.avg)])


def validate(model, loader, args, amp_autocast=suppress, attack=True):
    top1_m, adv_top1_m = AverageMeter(), AverageMeter()
    model.eval()
    for images, target in loader:
        images = images.to(args.device)
        target = target.to(args.device)
        with torch.no_grad(), amp_autocast():
            output = model(images)
        acc1, _ = accuracy(output, target, topk=(1, 5))
        if attack:
            adv_images = pgd_attack(model, images, target, args.attack_eps / 255., 1. / 255., 10, amp_autocast)
            with torch.no_grad(), amp_autocast():
                adv_output = model(adv_images)
            adv_acc1, _ = accuracy(adv_output, target, topk=(1, 5))
        else:
            adv_acc1 = torch.zeros_like(acc1)
        if args.distributed:
            acc1 = reduce_tensor(acc1, args.world_size)
            adv_acc1 = reduce_tensor(adv_acc1, args.world_size)
        top1_m.update(acc1.item(), images.size(0))
        adv_top1_m.update(adv_acc1.item(), images.size(0))
    return OrderedDict([('top1', top1_m.avg), ('adv_top1', adv_top1_m.avg)])


def main():
    logging.basicConfig(level=logging.INFO)
    args = get_args()
    init_distributed(args)
    torch.manual_seed(args.seed + args.rank)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    model = create_model(args.model, pretrained=args.pretrained, num_classes=args.num_classes,
                         drop_path_rate=args.drop_path)
    if args.resume:
        checkpoint = torch.load(args.resume, map_location='cpu')
        model.load_state_dict(checkpoint.get('state_dict', checkpoint))
    model.cuda()
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)

    optimizer = create_optimizer_v2(model, opt=args.opt, lr=args.lr, weight_decay=args.weight_decay)

    amp_autocast = suppress
    loss_scaler = None
    if args.amp:
        amp_dtype = torch.float16
        if args.amp_dtype == 'bfloat16' or (args.amp_dtype == 'auto' and torch.cuda.get_device_capability()[0] >= 8):
            amp_dtype = torch.bfloat16  # Ampere and newer: bf16 needs no loss scaling
        amp_autocast = partial(torch.cuda.amp.autocast, dtype=amp_dtype)
        if amp_dtype == torch.float16:
            loss_scaler = NativeScaler()
        if args.rank == 0:
            _logger.info('Using native Torch AMP. Training in mixed precision.')

    model_ema = ModelEmaV2(model, decay=args.model_ema_decay) if args.model_ema else None

    if args.distributed:
        model = NativeDDP(model, device_ids=[args.local_rank], broadcast_buffers=False)
    if args.torchcompile:
        model = torch.compile(model, mode='max-autotune')

    lr_scheduler, num_epochs = create_scheduler(args, optimizer)

    dataset_train = ImageDataset(os.path.join(args.data_dir, 'train'))
    dataset_eval = ImageDataset(os.path.join(args.data_dir, 'val'))
    data_config = resolve_data_config(vars(args), model=model)
    loader_train = create_loader(dataset_train, input_size=data_config['input_size'], batch_size=args.batch_size,
                                 is_training=True, use_prefetcher=False, mean=(0., 0., 0.), std=(1., 1., 1.),
                                 num_workers=args.workers, distributed=args.distributed, pin_memory=args.pin_mem)
    loader_eval = create_loader(dataset_eval, input_size=data_config['input_size'], batch_size=args.batch_size,
                                is_training=False, use_prefetcher=False, mean=(0., 0., 0.), std=(1., 1., 1.),
                                num_workers=args.workers, distributed=args.distributed, pin_memory=args.pin_mem)

    mixup_fn = None
    if args.mixup > 0 or args.cutmix > 0:
        mixup_fn = Mixup(mixup_alpha=args.mixup, cutmix_alpha=args.cutmix, label_smoothing=args.smoothing,
                         num_classes=args.num_classes)
        train_loss_fn = SoftTargetCrossEntropy()
    else:
        train_loss_fn = LabelSmoothingCrossEntropy(smoothing=args.smoothing)
    train_loss_fn = train_loss_fn.cuda()

    best_adv = 0.
    for epoch in range(num_epochs):
        if args.distributed:
            loader_train.sampler.set_epoch(epoch)
        train_one_epoch(epoch, model, loader_train, optimizer, train_loss_fn, args, lr_scheduler=lr_scheduler,
                        amp_autocast=amp_autocast, loss_scaler=loss_scaler, model_ema=model_ema, mixup_fn=mixup_fn)
        if args.distributed:
            distribute_bn(model, args.world_size, True)
        metrics = validate(model, loader_eval, args, amp_autocast=amp_autocast,
                           attack=(epoch + 1) % args.adv_eval_interval == 0)
        lr_scheduler.step(epoch + 1, metrics['top1'])
        if args.rank == 0:
            _logger.info(f'Epoch {epoch}: clean {metrics["top1"]:.2f} adv {metrics["adv_top1"]:.2f}')
            if metrics['adv_top1'] >= best_adv:
                best_adv = metrics['adv_top1']
                state = model.module.state_dict() if args.distributed else model.state_dict()
                torch.save({'epoch': epoch, 'state_dict': state}, os.path.join(args.output, 'best.pth.tar'))
    if args.distributed:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
