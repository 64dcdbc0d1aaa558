# "Adversarial Training for Free!" / "Fast is better than free" on ImageNet,
# multi-GPU version with torch.distributed (one process per GPU) and native AMP.
#
# Launch with scripts/run_imagenet_ddp.sh, e.g.
#   torchrun --nproc_per_node=8 main_free_ddp.py configs/free_at_eps4.yml --output_prefix free_eps4
import argparse
import os
import sys
import time
import shutil
import random

import numpy as np
import yaml
from easydict import EasyDict

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.utils.data
import torch.utils.data.distributed
import torchvision.transforms as transforms
import torchvision.datasets as datasets
import torchvision.models as models
from torch.nn.parallel import DistributedDataParallel as DDP

from utils import AverageMeter, accuracy, initiate_logger, pad_str, fgsm_attack_eval

model_names = sorted(name for name in models.__dict__
                     if name.islower() and not name.startswith("__")
                     and callable(models.__dict__[name]))


def parse_config_file(args):
    with open(args.config) as f:
        config = EasyDict(yaml.load(f, Loader=yaml.FullLoader))

    # Add args parameters to the dict
    for k, v in vars(args).items():
        config[k] = v

    # Add the output path
    config.output_name = '{:s}_step{:d}_eps{:d}_repeat{:d}'.format(args.output_prefix,
                         int(config.ADV.fgsm_step), int(config.ADV.clip_eps), config.ADV.n_repeats)
    return config


def parse_args():
    parser = argparse.ArgumentParser(description='PyTorch ImageNet Free/Fast Adversarial Training')
    parser.add_argument('config', metavar='FILE', help='path to yaml config file')
    parser.add_argument('--data', default='/data/imagenet', type=str, metavar='DIR', help='path to ImageNet')
    parser.add_argument('--output_prefix', default='free_adv', type=str)
    parser.add_argument('--resume', default='', type=str, metavar='PATH')
    parser.add_argument('--evaluate', dest='evaluate', action='store_true')
    parser.add_argument('--pretrained', dest='pretrained', action='store_true')
    parser.add_argument('--local_rank', '--local-rank', default=int(os.environ.get('LOCAL_RANK', 0)), type=int)
    parser.add_argument('--seed', default=None, type=int)
    return parser.parse_args()


def init_distributed(cfg):
    cfg.distributed = int(os.environ.get('WORLD_SIZE', 1)) > 1
    cfg.world_size = 1
    cfg.rank = 0
    if cfg.distributed:
        torch.cuda.set_device(cfg.local_rank)
        dist.init_process_group(backend=cfg.DIST.backend, init_method=cfg.DIST.init_method)
        cfg.world_size = dist.get_world_size()
        cfg.rank = dist.get_rank()
    else:
        torch.cuda.set_device(0)
    return torch.device('cuda', cfg.local_rank if cfg.distributed else 0)


def main():
    args = parse_args()
    configs = parse_config_file(args)
    device = init_distributed(configs)

    if args.seed is not None:
        random.seed(args.seed)
        np.random.seed(args.seed)
        torch.manual_seed(args.seed)
        torch.cuda.manual_seed_all(args.seed)
        cudnn.deterministic = True
    else:
        cudnn.benchmark = True

    is_master = configs.rank == 0
    if is_master and not os.path.isdir(os.path.join('trained_models', configs.output_name)):
        os.makedirs(os.path.join('trained_models', configs.output_name))
    logger = initiate_logger(configs.output_name, configs.evaluate) if is_master else None

    def log(msg):
        if logger is not None:
            logger.info(msg)

    log(pad_str(' ARGUMENTS '))
    for k, v in sorted(dict(configs).items()):
        log('{}: {}'.format(k, v))
    log(pad_str(''))

    # Create the model
    if configs.pretrained:
        log("=> using pre-trained model '{}'".format(configs.TRAIN.arch))
        model = models.__dict__[configs.TRAIN.arch](pretrained=True)
    else:
        log("=> creating model '{}'".format(configs.TRAIN.arch))
        model = models.__dict__[configs.TRAIN.arch]()

    if configs.DIST.sync_bn and configs.distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)

    model = model.to(device)
    if configs.TRAIN.channels_last:
        model = model.to(memory_format=torch.channels_last)

    if configs.distributed:
        model = DDP(model, device_ids=[configs.local_rank], output_device=configs.local_rank,
                    broadcast_buffers=False)

    # Criterion
    criterion = nn.CrossEntropyLoss().to(device)

    # Optimizer
    optimizer = torch.optim.SGD(model.parameters(), configs.TRAIN.lr,
                                momentum=configs.TRAIN.momentum,
                                weight_decay=configs.TRAIN.weight_decay)
    scaler = torch.cuda.amp.GradScaler(enabled=configs.TRAIN.amp)

    # Resume if a valid checkpoint path is provided
    if configs.resume:
        if os.path.isfile(configs.resume):
            log("=> loading checkpoint '{}'".format(configs.resume))
            checkpoint = torch.load(configs.resume, map_location=lambda storage, loc: storage.cuda(configs.local_rank))
            configs.TRAIN.start_epoch = checkpoint['epoch']
            best_prec1 = checkpoint['best_prec1']
            model.load_state_dict(checkpoint['state_dict'])
            optimizer.load_state_dict(checkpoint['optimizer'])
            if 'scaler' in checkpoint:
                scaler.load_state_dict(checkpoint['scaler'])
            log("=> loaded checkpoint '{}' (epoch {})".format(configs.resume, checkpoint['epoch']))
        else:
            log("=> no checkpoint found at '{}'".format(configs.resume))

    # Initiate data loaders
    traindir = os.path.join(configs.data, 'train')
    valdir = os.path.join(configs.data, 'val')

    train_dataset = datasets.ImageFolder(
        traindir,
        transforms.Compose([
            transforms.RandomResizedCrop(configs.DATA.crop_size),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
        ]))
    train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset) if configs.distributed else None

    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=configs.DATA.batch_size, shuffle=(train_sampler is None),
        num_workers=configs.DATA.workers, pin_memory=configs.DATA.pin_memory, sampler=train_sampler,
        persistent_workers=True, pin_memory_device="cuda")

    normalize = transforms.Normalize(mean=configs.TRAIN.mean, std=configs.TRAIN.std)
    val_loader = torch.utils.data.DataLoader(
        datasets.ImageFolder(valdir, transforms.Compose([
            transforms.Resize(configs.DATA.img_size),
            transforms.CenterCrop(configs.DATA.crop_size),
            transforms.ToTensor(),
        ])),
        batch_size=configs.DATA.batch_size, shuffle=False,
        num_workers=configs.DATA.workers, pin_memory=True)

    # If in evaluate mode: perform validation on PGD attacks as well as clean samples
    if configs.evaluate:
        log(pad_str(' Performing PGD Attacks '))
        for pgd_param in configs.ADV.pgd_attack:
            validate_pgd(val_loader, model, criterion, pgd_param[0], pgd_param[1], configs, device, log)
        validate(val_loader, model, criterion, configs, device, log)
        return

    mean = torch.Tensor(np.array(configs.TRAIN.mean)[:, np.newaxis, np.newaxis])
    mean = mean.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).cuda()
    std = torch.Tensor(np.array(configs.TRAIN.std)[:, np.newaxis, np.newaxis])
    std = std.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).cuda()

    # Initialize the perturbation that is shared (and carried over) between minibatches
    global_noise_data = torch.zeros([configs.DATA.batch_size, 3, configs.DATA.crop_size, configs.DATA.crop_size]).cuda()

    best_prec1 = 0
    for epoch in range(configs.TRAIN.start_epoch, configs.TRAIN.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        adjust_learning_rate(configs.TRAIN.lr, optimizer, epoch, configs.ADV.n_repeats)

        # train for one epoch
        global_noise_data = train(train_loader, model, criterion, optimizer, scaler, epoch, global_noise_data,
                                  mean, std, configs, device, log)

        # evaluate on validation set
        prec1 = validate(val_loader, model, criterion, configs, device, log)

        # remember best prec@1 and save checkpoint
        is_best = prec1 > best_prec1
        best_prec1 = max(prec1, best_prec1)
        if is_master:
            save_checkpoint({
                'epoch': epoch + 1,
                'arch': configs.TRAIN.arch,
                'state_dict': model.state_dict(),
                'best_prec1': best_prec1,
                'optimizer': optimizer.state_dict(),
                'scaler': scaler.state_dict(),
            }, is_best, os.path.join('trained_models', configs.output_name))

    # Automatically perform PGD Attacks at the end of training
    log(pad_str(' Performing PGD Attacks '))
    for pgd_param in configs.ADV.pgd_attack:
        validate_pgd(val_loader, model, criterion, pgd_param[0], pgd_param[1], configs, device, log)

    if configs.distributed:
        dist.barrier()
        dist.destroy_process_group()


def train(train_loader, model, criterion, optimizer, scaler, epoch, global_noise_data, mean, std,
          configs, device, log):
    batch_time = AverageMeter()
    data_time = AverageMeter()
    losses = AverageMeter()
    top1 = AverageMeter()
    top5 = AverageMeter()

    model.train()
    end = time.time()
    for i, (input, target) in enumerate(train_loader):
        end = time.time()
        input = input.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        if configs.TRAIN.channels_last:
            input = input.contiguous(memory_format=torch.channels_last)
        data_time.update(time.time() - end)

        for j in range(configs.ADV.n_repeats):
            # Ascend on the global noise
            noise_batch = global_noise_data[0:input.size(0)].clone().requires_grad_(True)
            in1 = input + noise_batch
            in1.clamp_(0, 1.0)
            in1.sub_(mean).div_(std)
            with torch.cuda.amp.autocast(enabled=configs.TRAIN.amp):
                output = model(in1)
                loss = criterion(output, target)

            prec1, prec5 = accuracy(output, target, topk=(1, 5))
            losses.update(loss.item(), input.size(0))
            top1.update(prec1[0], input.size(0))
            top5.update(prec5[0], input.size(0))

            # compute gradient and do SGD step
            optimizer.zero_grad()
            scaler.scale(loss).backward()

            # Update the noise for the next iteration
            pert = fgsm(noise_batch.grad, configs.ADV.fgsm_step)
            global_noise_data[0:input.size(0)] += pert.data
            global_noise_data.clamp_(-configs.ADV.clip_eps, configs.ADV.clip_eps)

            scaler.step(optimizer)
            scaler.update()

        # measure elapsed time
        torch.cuda.synchronize()
        batch_time.update(time.time() - end)
        end = time.time()

        if i % configs.TRAIN.print_freq == 0:
            log('Train Epoch: [{0}][{1}/{2}]\t'
                'Time {batch_time.val:.3f} ({batch_time.avg:.3f})\t'
                'Data {data_time.val:.3f} ({data_time.avg:.3f})\t'
                'Loss {loss.val:.4f} ({loss.avg:.4f})\t'
                'Prec@1 {top1.val:.3f} ({top1.avg:.3f})\t'
                'Prec@5 {top5.val:.3f} ({top5.avg:.3f})\t'
                'Mem {mem:.1f}G'.format(
                    epoch, i, len(train_loader), batch_time=batch_time,
                    data_time=data_time, top1=top1, top5=top5, cls_loss=losses, loss=losses,
                    mem=torch.cuda.max_memory_reserved() / 2**30))
            sys.stdout.flush()

    return global_noise_data


def fgsm(gradz, step_size):
    return step_size * torch.sign(gradz)


def validate_pgd(val_loader, model, criterion, K, step, configs, device, log):
    # Mean/Std for normalization
    mean = torch.Tensor(np.array(configs.TRAIN.mean)[:, np.newaxis, np.newaxis])
    mean = mean.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).to(device)
    std = torch.Tensor(np.array(configs.TRAIN.std)[:, np.newaxis, np.newaxis])
    std = std.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).to(device)
    # Initiate the meters
    batch_time = AverageMeter()
    losses = AverageMeter()
    top1 = AverageMeter()
    top5 = AverageMeter()

    eps = configs.ADV.clip_eps
    model.eval()
    end = time.time()
    logger_every = max(len(val_loader) // 10, 1)
    for i, (input, target) in enumerate(val_loader):
        input = input.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        orig_input = input.clone()
        randn = torch.FloatTensor(input.size()).uniform_(-eps, eps).to(device)
        input += randn
        input.clamp_(0, 1.0)
        for _ in range(K):
            invar = input.clone().requires_grad_(True)
            in1 = invar.sub(mean).div(std)
            output = model(in1)
            ascend_loss = criterion(output, target)
            ascend_grad = torch.autograd.grad(ascend_loss, invar)[0]
            pert = fgsm(ascend_grad, step)
            # Apply purturbation
            input += pert.data
            input = torch.max(orig_input - eps, input)
            input = torch.min(orig_input + eps, input)
            input.clamp_(0, 1.0)

        input.sub_(mean).div_(std)
        with torch.no_grad():
            # compute output
            output = model(input)
            loss = criterion(output, target)

            # measure accuracy and record loss
            prec1, prec5 = accuracy(output, target, topk=(1, 5))
            losses.update(loss.item(), input.size(0))
            top1.update(prec1[0], input.size(0))
            top5.update(prec5[0], input.size(0))

            # measure elapsed time
            batch_time.update(time.time() - end)
            end = time.time()

            if i % logger_every == 0:
                log('PGD Test: [{0}/{1}]\t'
                    'Loss {loss.val:.4f} ({loss.avg:.4f})\t'
                    'Prec@1 {top1.val:.3f} ({top1.avg:.3f})'.format(
                        i, len(val_loader), loss=losses, top1=top1))

    log(' PGD Final Prec@1 {top1.avg:.3f} Prec@5 {top5.avg:.3f}'.format(top1=top1, top5=top5))
    return top1.avg


def validate(val_loader, model, criterion, configs, device, log):
    mean = torch.Tensor(np.array(configs.TRAIN.mean)[:, np.newaxis, np.newaxis])
    mean = mean.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).to(device)
    std = torch.Tensor(np.array(configs.TRAIN.std)[:, np.newaxis, np.newaxis])
    std = std.expand(3, configs.DATA.crop_size, configs.DATA.crop_size).to(device)
    batch_time = AverageMeter()
    losses = AverageMeter()
    top1 = AverageMeter()
    top5 = AverageMeter()

    model.eval()
    end = time.time()
    with torch.no_grad():
        for i, (input, target) in enumerate(val_loader):
            input = input.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            input = input.sub(mean).div(std)
            with torch.cuda.amp.autocast(enabled=configs.TRAIN.amp, dtype=torch.float16):
                output = model(input)
            loss = criterion(output.float(), target)

            prec1, prec5 = accuracy(output, target, topk=(1, 5))
            losses.update(loss.item(), input.size(0))
            top1.update(prec1[0], input.size(0))
            top5.update(prec5[0], input.size(0))

            batch_time.update(time.time() - end)
            end = time.time()

    log(' Final Prec@1 {top1.avg:.3f} Prec@5 {top5.avg:.3f}'.format(top1=top1, top5=top5))
    return top1.avg


def adjust_learning_rate(initial_lr, optimizer, epoch, n_repeats):
    """Sets the learning rate to the initial LR decayed by 10 every 30 epochs"""
    lr = initial_lr * (0.1 ** (epoch // int(30 / n_repeats)))
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr


def save_checkpoint(state, is_best, filepath):
    filename = os.path.join(filepath, 'checkpoint.pth.tar')
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, os.path.join(filepath, 'model_best.pth.tar'))


if __name__ == '__main__':
    main()
