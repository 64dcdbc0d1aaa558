# Copyright (c) 2018-2019, NVIDIA CORPORATION
# Copyright (c) 2017-      Facebook, Inc
#
# All rights reserved.
#
# Redistribution and use in source and binary forms, with or without
# modification, are permitted provided that the following conditions are met:
#
# * Redistributions of source code must retain the above copyright notice, this
#   list of conditions and the following disclaimer.
#
# THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
# AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
# IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
# DISCLAIMED.
"""Quantization-aware fine-tuning of ResNet-50 / EfficientNet with pytorch-quantization (QAT recipe)."""

import argparse
import os
import random
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

from pytorch_quantization import nn as quant_nn
from pytorch_quantization import quant_modules
from pytorch_quantization.tensor_quant import QuantDescriptor

import dllogger
import image_classification.logger as log
from image_classification.dataloaders import (get_dali_train_loader, get_dali_val_loader,
                                              get_pytorch_train_loader, get_pytorch_val_loader)
from image_classification.models import efficientnet_quant_b0, efficientnet_quant_b4, resnet50
from image_classification.training import Executor, train_loop
from image_classification.utils import ModelAndLoss, get_optimizer, lr_cosine_policy
from image_classification.quantization import calibrate_model, select_default_calib_method


def add_parser_arguments(parser):
    parser.add_argument("data", metavar="DIR", help="path to dataset")
    parser.add_argument("--data-backend", metavar="BACKEND", default="dali-cpu",
                        choices=["pytorch", "synthetic", "dali-cpu", "dali-gpu"],
                        help="data backend: pytorch | synthetic | dali-cpu | dali-gpu (default: dali-cpu)")
    parser.add_argument("--arch", "-a", metavar="ARCH", default="resnet50",
                        choices=["resnet50", "efficientnet-quant-b0", "efficientnet-quant-b4"])
    parser.add_argument("-j", "--workers", default=5, type=int, metavar="N",
                        help="number of data loading workers (default: 5)")
    parser.add_argument("--epochs", default=10, type=int, metavar="N", help="number of total epochs to run")
    parser.add_argument("-b", "--batch-size", default=64, type=int, metavar="N", help="mini-batch size (default: 64) per gpu")
    parser.add_argument("--optimizer", default="sgd", type=str, choices=("sgd", "rmsprop", "lamb"))
    parser.add_argument("--lr", "--learning-rate", default=0.0001, type=float, metavar="LR", help="initial learning rate")
    parser.add_argument("--momentum", default=0.875, type=float, metavar="M", help="momentum")
    parser.add_argument("--weight-decay", "--wd", default=3.0517578125e-05, type=float, metavar="W")
    parser.add_argument("--amp", action="store_true", help="use NVIDIA Automatic Mixed Precision")
    parser.add_argument("--static-loss-scale", type=float, default=1, help="Static loss scale")
    parser.add_argument("--dynamic-loss-scale", action="store_true", help="Use dynamic loss scaling")
    parser.add_argument("--memory-format", type=str, default="nchw", choices=["nchw", "nhwc"],
                        help="memory layout, nchw or nhwc")
    parser.add_argument("--pretrained-from-file", default="", type=str, metavar="PATH",
                        help="load weights from local file - this is used to initialize QAT")
    parser.add_argument("--num-calib-batches", default=10, type=int)
    parser.add_argument("--seed", default=None, type=int, help="random seed used for numpy and pytorch")
    parser.add_argument("--workspace", type=str, default="./", metavar="DIR", help="path to directory where checkpoints will be stored")
    parser.add_argument("--local_rank", default=0, type=int)
    parser.add_argument("--jit", type=str, default="no", choices=["no", "script"], help="no -> do not use torch.jit; script -> use torch.jit.script")
    parser.add_argument("--raport-file", default="experiment_raport.json", type=str)


def prepare_for_training(args, model_args, model_arch):
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

    # Quantization: calibrated max for weights, histogram for activations
    quant_desc_input = QuantDescriptor(calib_method=select_default_calib_method(model_arch))
    quant_nn.QuantConv2d.set_default_quant_desc_input(quant_desc_input)
    quant_nn.QuantLinear.set_default_quant_desc_input(quant_desc_input)
    quant_modules.initialize()

    memory_format = torch.channels_last if args.memory_format == "nhwc" else torch.contiguous_format

    model_and_loss = ModelAndLoss(model_arch, nn.CrossEntropyLoss, cuda=True, memory_format=memory_format)
    if args.pretrained_from_file:
        state_dict = torch.load(args.pretrained_from_file, map_location=lambda storage, loc: storage.cuda(args.gpu))
        model_and_loss.model.load_state_dict(state_dict, strict=False)

    if args.data_backend == "pytorch":
        get_train_loader, get_val_loader = get_pytorch_train_loader, get_pytorch_val_loader
    elif args.data_backend == "dali-gpu":
        get_train_loader, get_val_loader = get_dali_train_loader(dali_cpu=False), get_dali_val_loader()
    elif args.data_backend == "dali-cpu":
        get_train_loader, get_val_loader = get_dali_train_loader(dali_cpu=True), get_dali_val_loader()
    else:
        raise NotImplementedError(args.data_backend)

    train_loader, train_loader_len = get_train_loader(
        args.data, args.batch_size, 1000, False, workers=args.workers, _worker_init_fn=_worker_init_fn,
        memory_format=memory_format)
    val_loader, val_loader_len = get_val_loader(
        args.data, args.batch_size, 1000, False, workers=args.workers, _worker_init_fn=_worker_init_fn,
        memory_format=memory_format)

    if args.num_calib_batches > 0:
        with torch.no_grad():
            calibrate_model(model_and_loss.model, train_loader, args.num_calib_batches)

    if args.optimizer == "lamb":
        from apex.optimizers import FusedLAMB
        optimizer = FusedLAMB(model_and_loss.model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    else:
        optimizer = get_optimizer(list(model_and_loss.model.named_parameters()), args.lr, args=args)

    lr_policy = lr_cosine_policy(args.lr, 0, args.epochs, logger=None)

    scaler = torch.cuda.amp.GradScaler(
        init_scale=args.static_loss_scale,
        growth_factor=2,
        backoff_factor=0.5,
        growth_interval=100 if args.dynamic_loss_scale else 1000000000,
        enabled=args.amp,
    )

    if args.distributed:
        model_and_loss.distributed(args.gpu)

    model_and_loss.load_model_state(None)

    return (model_and_loss, optimizer, lr_policy, scaler, train_loader, val_loader, train_loader_len)


def main(args, model_args, model_arch):
    exp_start_time = time.time()
    global best_prec1
    best_prec1 = 0

    model_and_loss, optimizer, lr_policy, scaler, train_loader, val_loader, train_loader_len = \
        prepare_for_training(args, model_args, model_arch)

    cudnn.benchmark = True

    executor = Executor(
        model_and_loss.model,
        model_and_loss.loss,
        cuda=True,
        memory_format=torch.channels_last if args.memory_format == "nhwc" else torch.contiguous_format,
        amp=args.amp,
        scaler=scaler,
        divide_loss=1,
        ts_script=args.jit == "script",
    )

    train_loop(
        executor,
        optimizer,
        lr_policy,
        train_loader,
        val_loader,
        logger=None,
        should_backup_checkpoint=lambda ep: ep % 5 == 0,
        start_epoch=0,
        end_epoch=args.epochs,
        best_prec1=best_prec1,
        checkpoint_dir=args.workspace,
        checkpoint_filename="quantized_" + args.arch + ".pth.tar",
    )

    torch.cuda.synchronize()
    if not torch.distributed.is_initialized() or torch.distributed.get_rank() == 0:
        print("Experiment ended after {:.1f}s, peak memory {:.0f}MiB".format(
            time.time() - exp_start_time, torch.cuda.max_memory_allocated() / 2**20))
        quant_nn.TensorQuantizer.use_fb_fake_quant = True
        dummy = torch.randn(1, 3, 224, 224, device="cuda")
        torch.onnx.export(model_and_loss.model, dummy, os.path.join(args.workspace, args.arch + "_qat.onnx"),
                          opset_version=13, do_constant_folding=True)


if __name__ == "__main__":
    epilog = ["Based on the architecture picked by --arch flag, you may use the following options:\n"]
    parser = argparse.ArgumentParser(description="PyTorch ImageNet Training", epilog="".join(epilog),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    add_parser_arguments(parser)
    args, rest = parser.parse_known_args()
    model_arch = {"resnet50": resnet50, "efficientnet-quant-b0": efficientnet_quant_b0,
                  "efficientnet-quant-b4": efficientnet_quant_b4}[args.arch]
    model_args, rest = model_arch.parser().parse_known_args(rest)
    assert len(rest) == 0, f"Unknown args passed: {rest}"

    main(args, model_args, model_arch)
