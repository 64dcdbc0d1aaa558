# Copyright (c) 2018-2019, NVIDIA CORPORATION
# Copyright (c) 2017-      Facebook, Inc
#
# All rights reserved.
"""ResNet-50 / EfficientNet training and throughput benchmark (DeepLearningExamples ConvNets).

    python ./multiproc.py --nproc_per_node 8 ./main.py --arch resnet50 --amp --static-loss-scale 128 \
        --mode benchmark-training --prof 100 -b 256 /imagenet
"""
import argparse
import os
import random
import time

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.nn as nn
from torch.cuda.amp import autocast
from torch.nn.parallel import DistributedDataParallel as DDP

import dllogger

import image_classification.logger as log
from image_classification import utils
from image_classification.dataloaders import (DATA_BACKEND_CHOICES, get_dali_train_loader,
                                              get_pytorch_train_loader, get_synthetic_loader)
from image_classification.gpu_affinity import AffinityMode, set_affinity
from image_classification.models import efficientnet_b0, resnet50
from image_classification.smoothing import LabelSmoothing

MODELS = {"resnet50": resnet50, "efficientnet-b0": efficientnet_b0}


def add_parser_arguments(parser):
    parser.add_argument("data", metavar="DIR", help="path to dataset")
    parser.add_argument("--data-backend", metavar="BACKEND", default="dali-gpu", choices=DATA_BACKEND_CHOICES,
                        help="data backend: " + " | ".join(DATA_BACKEND_CHOICES) + " (default: dali-gpu)")
    parser.add_argument("--interpolation", metavar="INTERPOLATION", default="bilinear")
    parser.add_argument("--arch", "-a", metavar="ARCH", default="resnet50", choices=list(MODELS))
    parser.add_argument("-j", "--workers", default=5, type=int, metavar="N")
    parser.add_argument("--prefetch", default=2, type=int, metavar="N")
    parser.add_argument("--epochs", default=90, type=int, metavar="N")
    parser.add_argument("-b", "--batch-size", default=256, type=int, metavar="N", help="mini-batch size per gpu")
    parser.add_argument("--lr", "--learning-rate", default=0.1, type=float, metavar="LR")
    parser.add_argument("--momentum", default=0.9, type=float, metavar="M")
    parser.add_argument("--weight-decay", "--wd", default=1e-4, type=float, metavar="W")
    parser.add_argument("--label-smoothing", default=0.0, type=float, metavar="S")
    parser.add_argument("--amp", action="store_true", help="use NVIDIA Automatic Mixed Precision")
    parser.add_argument("--static-loss-scale", type=float, default=1)
    parser.add_argument("--dynamic-loss-scale", action="store_true")
    parser.add_argument("--prof", type=int, default=-1, metavar="N",
                        help="Run only N iterations (and open an nsys capture range)")
    parser.add_argument("--mode", choices=["train", "benchmark-training"], default="train")
    parser.add_argument("--seed", default=None, type=int)
    parser.add_argument("--memory-format", type=str, default="nchw", choices=["nchw", "nhwc"])
    parser.add_argument("--cudnn-benchmark", action="store_true")
    parser.add_argument("--gpu-affinity", type=str, default="socket_unique_contiguous",
                        choices=[m.name for m in AffinityMode])
    parser.add_argument("--workspace", type=str, default="./")
    parser.add_argument("--raport-file", default="experiment_raport.json", type=str)
    parser.add_argument("--local_rank", default=int(os.environ.get("LOCAL_RANK", 0)), type=int)


def get_train_step(model_and_loss, optimizer, scaler, use_amp=False, batch_size_multiplier=1):
    def _step(input, target, optimizer_step=True):
        with autocast(enabled=use_amp):
            output = model_and_loss[0](input)
            loss = model_and_loss[1](output, target)
            loss /= batch_size_multiplier
            if torch.distributed.is_initialized():
                reduced_loss = utils.reduce_tensor(loss.data)
            else:
                reduced_loss = loss.data

        scaler.scale(loss).backward()

        if optimizer_step:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)

        torch.cuda.synchronize()
        return reduced_loss

    return _step


def train(train_step, train_loader, lr_scheduler, log_fn, prof=-1, step=0):
    end = time.time()
    data_iter = enumerate(train_loader)
    for i, (input, target) in data_iter:
        bs = input.size(0)
        lr = lr_scheduler(i)
        data_time = time.time() - end

        if prof > 0 and i == 10:
            # start the nsys capture range after warm-up (nsys --capture-range=cudaProfilerApi)
            torch.cuda.profiler.start()
        with torch.autograd.profiler.emit_nvtx(enabled=prof > 0 and i >= 10):
            loss = train_step(input, target)

        it_time = time.time() - end
        log_fn(compute_ips=utils.calc_ips(bs, it_time - data_time),
               total_ips=utils.calc_ips(bs, it_time),
               data_time=data_time,
               compute_time=it_time - data_time,
               lr=lr,
               loss=loss.item())
        end = time.time()
        if prof > 0 and (i + 1 >= prof):
            torch.cuda.profiler.stop()
            time.sleep(5)
            break
    return i + 1


def main(args):
    args.distributed = False
    if "WORLD_SIZE" in os.environ:
        args.distributed = int(os.environ["WORLD_SIZE"]) > 1
        args.local_rank = int(os.environ["LOCAL_RANK"])
    args.gpu = 0
    args.world_size = 1
    if args.distributed:
        args.gpu = args.local_rank % torch.cuda.device_count()
        torch.cuda.set_device(args.gpu)
        dist.init_process_group(backend="nccl", init_method="env://")
        args.world_size = torch.distributed.get_world_size()
    affinity = set_affinity(args.gpu, int(os.environ.get("LOCAL_WORLD_SIZE", 1)), args.gpu_affinity)
    print(f"Training process {args.local_rank} affinity: {affinity}")

    if args.seed is not None:
        print("Using seed = {}".format(args.seed))
        torch.manual_seed(args.seed + args.local_rank)
        torch.cuda.manual_seed(args.seed + args.local_rank)
        np.random.seed(seed=args.seed + args.local_rank)
        random.seed(args.seed + args.local_rank)

    if not torch.distributed.is_initialized() or torch.distributed.get_rank() == 0:
        dllogger.init(backends=[
            dllogger.JSONStreamBackend(dllogger.Verbosity.VERBOSE,
                                       os.path.join(args.workspace, args.raport_file)),
            dllogger.StdOutBackend(dllogger.Verbosity.DEFAULT),
        ])
    else:
        dllogger.init(backends=[])
    dllogger.metadata("train.compute_ips", {"unit": "images/s", "format": ":.3f"})
    dllogger.log(step="PARAMETER", data={k: v for k, v in vars(args).items()})

    memory_format = torch.channels_last if args.memory_format == "nhwc" else torch.contiguous_format
    model = MODELS[args.arch](num_classes=1000)
    model = model.cuda().to(memory_format=memory_format)
    if args.distributed:
        model = DDP(model, device_ids=[args.gpu], output_device=args.gpu)
    loss = LabelSmoothing(args.label_smoothing) if args.label_smoothing > 0 else nn.CrossEntropyLoss()
    loss = loss.cuda()

    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                                weight_decay=args.weight_decay, nesterov=False)
    scaler = torch.cuda.amp.GradScaler(
        init_scale=args.static_loss_scale,
        growth_factor=2,
        backoff_factor=0.5,
        growth_interval=100 if args.dynamic_loss_scale else 1000000000,
        enabled=args.amp,
    )
    cudnn.benchmark = args.cudnn_benchmark

    if args.data_backend == "pytorch":
        get_train_loader = get_pytorch_train_loader
    elif args.data_backend == "dali-gpu":
        get_train_loader = get_dali_train_loader(dali_cpu=False)
    elif args.data_backend == "dali-cpu":
        get_train_loader = get_dali_train_loader(dali_cpu=True)
    else:
        get_train_loader = get_synthetic_loader
    train_loader, train_loader_len = get_train_loader(
        args.data, 224, args.batch_size, 1000, False, interpolation=args.interpolation,
        workers=args.workers, prefetch_factor=args.prefetch, memory_format=memory_format)

    def lr_scheduler(iteration):
        return args.lr

    def log_fn(**metrics):
        dllogger.log(step=(0, log_fn.i), data={f"train.{k}": v for k, v in metrics.items()})
        log_fn.i += 1
    log_fn.i = 0

    train_step = get_train_step((model, loss), optimizer, scaler, use_amp=args.amp)
    epochs = 1 if args.mode == "benchmark-training" else args.epochs
    start = time.time()
    total_imgs = 0
    for epoch in range(epochs):
        n = train(train_step, train_loader, lr_scheduler, log_fn, prof=args.prof)
        total_imgs += n * args.batch_size * args.world_size
    elapsed = time.time() - start
    dllogger.log(step=tuple(), data={"train.total_ips": total_imgs / elapsed,
                                     "train.peak_mem_gb": torch.cuda.max_memory_allocated() / 2 ** 30})
    dllogger.flush()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
    add_parser_arguments(parser)
    args = parser.parse_args()
    cudnn.benchmark = True
    main(args)
