# Copyright (c) 2018-2019, NVIDIA CORPORATION
# Copyright (c) 2017-      Facebook, Inc
#
# All rights reserved.
#
# Licensed under the BSD 3-Clause License.

import argparse
import os
import random
import shutil
import time

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.nn as nn
import torch.nn.parallel
import torch.optim
import torch.utils.data
import torch.utils.data.distributed
from torch.nn.parallel import DistributedDataParallel as DDP

import image_classification.logger as log
from image_classification.dataloaders import (
    DATA_BACKEND_CHOICES,
    get_dali_train_loader,
    get_dali_val_loader,
    get_pytorch_train_loader,
    get_pytorch_val_loader,
    get_synthetic_loader,
)
from image_classification.models import resnet50, resnext101_32x4d, se_resnext101_32x4d
from image_classification.smoothing import LabelSmoothing
from image_classification.utils import AverageMeter, accuracy, reduce_tensor, timed_generator

MODELS = {
    "resnet50": resnet50,
    "resnext101-32x4d": resnext101_32x4d,
    "se-resnext101-32x4d": se_resnext101_32x4d,
}


def add_parser_arguments(parser):
    parser.add_argument("data", metavar="DIR", help="path to dataset")
    parser.add_argument(
        "--data-backend",
        metavar="BACKEND",
        default="dali-cpu",
        choices=DATA_BACKEND_CHOICES,
        help="data backend: " + " | ".join(DATA_BACKEND_CHOICES) + " (default: dali-cpu)",
    )
    parser.add_argument("--interpolation", metavar="INTERPOLATION", default="bilinear")
    parser.add_argument("--arch", "-a", metavar="ARCH", default="resnet50", choices=list(MODELS))
    parser.add_argument("-j", "--workers", default=5, type=int, metavar="N")
    parser.add_argument("--prefetch", default=2, type=int, metavar="N")
    parser.add_argument("--epochs", default=90, type=int, metavar="N")
    parser.add_argument("--run-epochs", default=-1, type=int, metavar="N")
    parser.add_argument("-b", "--batch-size", default=256, type=int, metavar="N")
    parser.add_argument("--optimizer-batch-size", default=-1, type=int, metavar="N")
    parser.add_argument("--lr", "--learning-rate", default=0.1, type=float, metavar="LR")
    parser.add_argument("--lr-schedule", default="step", type=str, choices=["step", "linear", "cosine"])
    parser.add_argument("--warmup", default=0, type=int, metavar="E")
    parser.add_argument("--label-smoothing", default=0.0, type=float, metavar="S")
    parser.add_argument("--mixup", default=0.0, type=float, metavar="ALPHA")
    parser.add_argument("--momentum", default=0.9, type=float, metavar="M")
    parser.add_argument("--weight-decay", "--wd", default=1e-4, type=float, metavar="W")
    parser.add_argument("--optimizer", default="sgd", type=str, choices=("sgd", "rmsprop", "lamb"))
    parser.add_argument("--nesterov", action="store_true")
    parser.add_argument("--print-freq", "-p", default=10, type=int, metavar="N")
    parser.add_argument("--resume", default=None, type=str, metavar="PATH")
    parser.add_argument("--static-loss-scale", type=float, default=1)
    parser.add_argument("--dynamic-loss-scale", action="store_true")
    parser.add_argument("--amp", action="store_true", help="use automatic mixed precision")
    parser.add_argument("--seed", default=None, type=int)
    parser.add_argument("--gather-checkpoints", action="store_true")
    parser.add_argument("--raport-file", default="experiment_raport.json", type=str)
    parser.add_argument("--evaluate", action="store_true")
    parser.add_argument("--training-only", action="store_true")
    parser.add_argument("--no-checkpoints", action="store_false", dest="save_checkpoints")
    parser.add_argument("--checkpoint-filename", default="checkpoint.pth.tar", type=str)
    parser.add_argument("--workspace", type=str, default="./")
    parser.add_argument(
        "--memory-format",
        type=str,
        default="nchw",
        choices=["nchw", "nhwc"],
        help="memory layout, nchw or nhwc",
    )


def get_optimizer(parameters, args):
    if args.optimizer == "sgd":
        optimizer = torch.optim.SGD(
            parameters,
            args.lr,
            momentum=args.momentum,
            weight_decay=args.weight_decay,
            nesterov=args.nesterov,
        )
    elif args.optimizer == "rmsprop":
        optimizer = torch.optim.RMSprop(
            parameters, lr=args.lr, alpha=0.9, momentum=args.momentum, eps=0.0316
        )
    elif args.optimizer == "lamb":
        from apex.optimizers import FusedLAMB

        optimizer = FusedLAMB(parameters, lr=args.lr, weight_decay=args.weight_decay)
    return optimizer


def train_step(model, criterion, optimizer, scaler, use_amp, batch_size_multiplier):
    def _step(input, target, optimizer_step=True):
        input_var = torch.autograd.Variable(input)
        target_var = torch.autograd.Variable(target)

        with torch.cuda.amp.autocast(enabled=use_amp):
            output = model(input_var)
            loss = criterion(output, target_var)
            loss /= batch_size_multiplier
            if torch.distributed.is_initialized():
                reduced_loss = reduce_tensor(loss.data)
            else:
                reduced_loss = loss.data

        scaler.scale(loss).backward()
        if optimizer_step:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()

        torch.cuda.synchronize()
        return reduced_loss

    return _step


def train_epoch(train_loader, train_step, epoch, logger, prof=-1):
    batch_time_m = AverageMeter()
    data_time_m = AverageMeter()
    loss_m = AverageMeter()
    end = time.time()
    for i, (input, target) in timed_generator(train_loader):
        data_time = time.time() - end
        if prof > 0 and i >= prof:
            break
        loss = train_step(input, target)
        it_time = time.time() - end
        batch_time_m.update(it_time)
        data_time_m.update(data_time)
        loss_m.update(loss.item(), input.size(0))
        if logger is not None and i % 10 == 0:
            logger.log_metric("train.loss", loss_m.avg)
            logger.log_metric("train.compute_ips", input.size(0) / (it_time - data_time))
            logger.log_metric("train.data_time", data_time_m.avg)
        end = time.time()
    return loss_m.avg


def main(args):
    exp_start_time = time.time()
    global best_prec1
    best_prec1 = 0

    args.distributed = False
    if "WORLD_SIZE" in os.environ:
        args.distributed = int(os.environ["WORLD_SIZE"]) > 1
        args.local_rank = int(os.environ["LOCAL_RANK"])
    else:
        args.local_rank = 0

    args.gpu = 0
    args.world_size = 1

    if args.distributed:
        args.gpu = args.local_rank % torch.cuda.device_count()
        torch.cuda.set_device(args.gpu)
        dist.init_process_group(backend="nccl", init_method="env://")
        args.world_size = torch.distributed.get_world_size()

    if args.seed is not None:
        print("Using seed = {}".format(args.seed))
        torch.manual_seed(args.seed + args.local_rank)
        torch.cuda.manual_seed(args.seed + args.local_rank)
        np.random.seed(seed=args.seed + args.local_rank)
        random.seed(args.seed + args.local_rank)

        def _worker_init_fn(id):
            np.random.seed(seed=args.seed + args.local_rank + id)
            random.seed(args.seed + args.local_rank + id)

    else:

        def _worker_init_fn(id):
            pass

    if args.static_loss_scale != 1.0:
        if not args.amp:
            print("Warning: if --amp is not used, static_loss_scale will be ignored.")

    if args.optimizer_batch_size < 0:
        batch_size_multiplier = 1
    else:
        tbs = args.world_size * args.batch_size
        if args.optimizer_batch_size % tbs != 0:
            print("Warning: simulated batch size {} is not divisible by actual batch size {}".format(
                args.optimizer_batch_size, tbs))
        batch_size_multiplier = int(args.optimizer_batch_size / tbs)
        print("BSM: {}".format(batch_size_multiplier))

    memory_format = (
        torch.channels_last if args.memory_format == "nhwc" else torch.contiguous_format
    )

    model = MODELS[args.arch](num_classes=1000)
    model = model.cuda().to(memory_format=memory_format)
    if args.distributed:
        model = DDP(model, device_ids=[args.gpu], output_device=args.gpu)

    if args.label_smoothing > 0.0:
        criterion = LabelSmoothing(args.label_smoothing)
    else:
        criterion = nn.CrossEntropyLoss()
    criterion = criterion.cuda()

    optimizer = get_optimizer(list(model.parameters()), args)
    scaler = torch.cuda.amp.GradScaler(
        init_scale=args.static_loss_scale,
        growth_factor=2,
        backoff_factor=0.5,
        growth_interval=100 if args.dynamic_loss_scale else 1000000000,
        enabled=args.amp,
    )

    if args.resume is not None:
        if os.path.isfile(args.resume):
            print("=> loading checkpoint '{}'".format(args.resume))
            checkpoint = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda(args.gpu))
            model.load_state_dict(checkpoint["state_dict"])
            optimizer.load_state_dict(checkpoint["optimizer"])
        else:
            print("=> no checkpoint found at '{}'".format(args.resume))

    if args.data_backend == "pytorch":
        get_train_loader = get_pytorch_train_loader
        get_val_loader = get_pytorch_val_loader
    elif args.data_backend == "dali-gpu":
        get_train_loader = get_dali_train_loader(dali_cpu=False)
        get_val_loader = get_dali_val_loader()
    elif args.data_backend == "dali-cpu":
        get_train_loader = get_dali_train_loader(dali_cpu=True)
        get_val_loader = get_dali_val_loader()
    elif args.data_backend == "synthetic":
        get_val_loader = get_synthetic_loader
        get_train_loader = get_synthetic_loader

    train_loader, train_loader_len = get_train_loader(
        args.data,
        224,
        args.batch_size,
        1000,
        args.mixup > 0.0,
        interpolation=args.interpolation,
        workers=args.workers,
        _worker_init_fn=_worker_init_fn,
        memory_format=memory_format,
    )
    val_loader, val_loader_len = get_val_loader(
        args.data,
        224,
        args.batch_size,
        1000,
        False,
        interpolation=args.interpolation,
        workers=args.workers,
        _worker_init_fn=_worker_init_fn,
        memory_format=memory_format,
    )

    if not torch.distributed.is_initialized() or torch.distributed.get_rank() == 0:
        logger = log.Logger(args.print_freq, [], start_epoch=0)
    else:
        logger = None

    cudnn.benchmark = True
    step = train_step(model, criterion, optimizer, scaler, args.amp, batch_size_multiplier)
    epochs = args.epochs if args.run_epochs < 0 else args.run_epochs
    for epoch in range(epochs):
        model.train()
        loss = train_epoch(train_loader, step, epoch, logger)
        if logger is not None:
            logger.end_epoch()
            print("epoch {} loss {:.4f} peak mem {:.1f} GB".format(
                epoch, loss, torch.cuda.max_memory_allocated() / 2**30))
        if args.save_checkpoints and (not args.distributed or args.local_rank == 0):
            torch.save({"epoch": epoch + 1, "arch": args.arch, "state_dict": model.state_dict(),
                        "optimizer": optimizer.state_dict()},
                       os.path.join(args.workspace, args.checkpoint_filename))
    print("Experiment ended after {:.1f}s".format(time.time() - exp_start_time))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
    add_parser_arguments(parser)
    args = parser.parse_args()
    cudnn.benchmark = True
    main(args)
