#!/usr/bin/env python3
""" InterFuser Training Script

Based on the timm ImageNet training script (Ross Wightman), adapted to the CARLA driving dataset:
multi-view cameras + LiDAR in, waypoints / object density map / traffic states out.
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
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as NativeDDP

from timm.data import create_carla_dataset, create_carla_loader
from timm.models import create_model, safe_model_name, resume_checkpoint, model_parameters
from timm.utils import setup_default_logging, random_seed, get_outdir, CheckpointSaver, update_summary
from timm.utils import AverageMeter, distribute_bn, reduce_tensor, dispatch_clip_grad
from timm.utils import ApexScaler, NativeScaler
from timm.optim import create_optimizer_v2, optimizer_kwargs
from timm.scheduler import create_scheduler
from timm.loss import SoftTargetCrossEntropy

try:
    from apex import amp
    from apex.parallel import DistributedDataParallel as ApexDDP
    from apex.parallel import convert_syncbn_model

    has_apex = True
except ImportError:
    has_apex = False

has_native_amp = False
try:
    if getattr(torch.cuda.amp, "autocast") is not None:
        has_native_amp = True
except AttributeError:
    pass

torch.backends.cudnn.benchmark = True
_logger = logging.getLogger("train")

config_parser = parser = argparse.ArgumentParser(description="Training Config", add_help=False)
parser.add_argument("-c", "--config", default="", type=str, metavar="FILE",
                    help="YAML config file specifying default arguments")

parser = argparse.ArgumentParser(description="InterFuser CARLA Training")
# Dataset / Model parameters
parser.add_argument("data_dir", metavar="DIR", help="path to dataset")
parser.add_argument("--dataset", "-d", metavar="NAME", default="carla", help="dataset type")
parser.add_argument("--train-towns", type=int, nargs="+", default=[0], help="dataset train towns")
parser.add_argument("--val-towns", type=int, nargs="+", default=[1], help="dataset validation towns")
parser.add_argument("--model", default="interfuser_baseline", type=str, metavar="MODEL")
parser.add_argument("--pretrained", action="store_true", default=False)
parser.add_argument("--initial-checkpoint", default="", type=str, metavar="PATH")
parser.add_argument("--resume", default="", type=str, metavar="PATH")
parser.add_argument("-b", "--batch-size", type=int, default=32, metavar="N")
# Optimizer parameters
parser.add_argument("--opt", default="adamw", type=str, metavar="OPTIMIZER")
parser.add_argument("--weight-decay", type=float, default=0.05)
parser.add_argument("--clip-grad", type=float, default=None, metavar="NORM")
parser.add_argument("--clip-mode", type=str, default="norm")
# Learning rate schedule parameters
parser.add_argument("--sched", default="cosine", type=str, metavar="SCHEDULER")
parser.add_argument("--lr", type=float, default=5e-4, metavar="LR")
parser.add_argument("--min-lr", type=float, default=1e-5, metavar="LR")
parser.add_argument("--epochs", type=int, default=35, metavar="N")
parser.add_argument("--warmup-epochs", type=int, default=5, metavar="N")
# Loss weights
parser.add_argument("--smoothed_l1", type=bool, default=False)
parser.add_argument("--junction-weights", type=float, nargs=2, default=[1.0, 2.0])
# Misc
parser.add_argument("--seed", type=int, default=42, metavar="S")
parser.add_argument("--log-interval", type=int, default=50, metavar="N")
parser.add_argument("-j", "--workers", type=int, default=4, metavar="N")
parser.add_argument("--amp", action="store_true", default=False,
                    help="use NVIDIA Apex AMP or Native AMP for mixed precision training")
parser.add_argument("--apex-amp", action="store_true", default=False, help="Use NVIDIA Apex AMP mixed precision")
parser.add_argument("--native-amp", action="store_true", default=False, help="Use Native Torch AMP mixed precision")
parser.add_argument("--channels-last", action="store_true", default=False, help="Use channels_last memory layout")
parser.add_argument("--pin-mem", action="store_true", default=False,
                    help="Pin CPU memory in DataLoader for more efficient (sometimes) transfer to GPU.")
parser.add_argument("--no-prefetcher", action="store_true", default=False, help="disable fast prefetcher")
parser.add_argument("--output", default="", type=str, metavar="PATH")
parser.add_argument("--eval-metric", default="l1_error", type=str, metavar="EVAL_METRIC")
parser.add_argument("--local_rank", default=0, type=int)
parser.add_argument("--sync-bn", action="store_true", default=False)
parser.add_argument("--torchscript", dest="torchscript", action="store_true")


def _parse_args():
    # Do we have a config file to parse?
    args_config, remaining = config_parser.parse_known_args()
    if args_config.config:
        with open(args_config.config, "r") as f:
            cfg = yaml.safe_load(f)
            parser.set_defaults(**cfg)
    args = parser.parse_args(remaining)
    args_text = yaml.safe_dump(args.__dict__, default_flow_style=False)
    return args, args_text


class WaypointL1Loss:
    def __init__(self, l1_loss=torch.nn.L1Loss):
        self.loss = l1_loss(reduction="none")
        # later waypoints get smaller weights (harmonic decay, normalised to 1)
        raw = [1.0 / (i + 1) ** 0.5 for i in range(10)]
        self.weights = [w / sum(raw) for w in raw]

    def __call__(self, output, target):
        invaild_mask = target.ge(1000)
        output[invaild_mask] = 0
        target[invaild_mask] = 0
        loss = self.loss(output, target)  # shape: n, 12, 2
        loss = torch.mean(loss, (0, 2))  # shape: 12
        loss = loss * torch.tensor(self.weights, device=output.device)
        return torch.mean(loss)


class MVTL1Loss(nn.Module):
    """L1 loss on the object density map: occupancy probability (balanced) + box attributes."""

    def __init__(self, weight=1, l1_loss=nn.L1Loss):
        super().__init__()
        self.loss = l1_loss()
        self.weight = weight

    def forward(self, output, target):
        target_1_mask = target[:, :, 0].ge(0.01)
        target_0_mask = ~target_1_mask
        loss_prob_1 = self.loss(output[:, :, 0][target_1_mask], target[:, :, 0][target_1_mask]) if target_1_mask.any() else 0
        loss_prob_0 = self.loss(output[:, :, 0][target_0_mask], target[:, :, 0][target_0_mask]) if target_0_mask.any() else 0
        loss_1 = 0.5 * loss_prob_0 + 0.5 * loss_prob_1
        loss_2 = self.loss(output[target_1_mask][:, 1:6], target[target_1_mask][:, 1:6]) if target_1_mask.any() else 0
        return self.weight * loss_1, self.weight * loss_2


def to_device_dict(sample):
    for key in sample:
        if isinstance(sample[key], torch.Tensor):
            sample[key] = sample[key].cuda()
    return sample


def main():
    setup_default_logging()
    args, args_text = _parse_args()

    args.prefetcher = not args.no_prefetcher
    args.distributed = False
    if "WORLD_SIZE" in os.environ:
        args.distributed = int(os.environ["WORLD_SIZE"]) > 1
    args.device = "cuda:0"
    args.world_size = 1
    args.rank = 0  # global rank
    if args.distributed:
        args.local_rank = int(os.environ.get("LOCAL_RANK", args.local_rank))
        args.device = "cuda:%d" % args.local_rank
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
        args.world_size = torch.distributed.get_world_size()
        args.rank = torch.distributed.get_rank()
        _logger.info("Training in distributed mode with multiple processes, 1 GPU per process. Process %d, total %d, %s."
                     % (args.rank, args.world_size, args.device))
    else:
        _logger.info("Training with a single process on 1 GPUs (%s)." % args.device)

    # resolve AMP arguments based on PyTorch / Apex availability
    use_amp = None
    if args.amp:
        # `--amp` chooses native amp before apex (APEX ver not actively maintained)
        if has_native_amp:
            args.native_amp = True
        elif has_apex:
            args.apex_amp = True
    if args.apex_amp and has_apex:
        use_amp = "apex"
    elif args.native_amp and has_native_amp:
        use_amp = "native"

    random_seed(args.seed, args.rank)

    model = create_model(args.model, pretrained=args.pretrained, checkpoint_path=args.initial_checkpoint)
    if args.local_rank == 0:
        _logger.info("Model %s created, param count:%d" % (args.model, sum([m.numel() for m in model.parameters()])))

    # move model to GPU, enable channels last layout if set
    model.cuda()
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)

    # setup synchronized BatchNorm for distributed training
    if args.distributed and args.sync_bn:
        if has_apex and use_amp == "apex":
            # Apex SyncBN preferred unless native amp is activated
            model = convert_syncbn_model(model)
        else:
            model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)

    if args.torchscript:
        assert not use_amp == "apex", "Cannot use APEX AMP with torchscripted model"
        assert not args.sync_bn, "Cannot use SyncBatchNorm with torchscripted model"
        model = torch.jit.script(model)

    if args.opt == "adamw":
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    else:
        optimizer = create_optimizer_v2(model, **optimizer_kwargs(cfg=args))

    # setup automatic mixed-precision (AMP) loss scaling and op casting
    amp_autocast = suppress  # do nothing
    loss_scaler = None
    if use_amp == "apex":
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss_scaler = ApexScaler()
        if args.local_rank == 0:
            _logger.info("Using NVIDIA APEX AMP. Training in mixed precision.")
    elif use_amp == "native":
        amp_autocast = torch.cuda.amp.autocast
        loss_scaler = NativeScaler()
        if args.local_rank == 0:
            _logger.info("Using native Torch AMP. Training in mixed precision.")

    # optionally resume from a checkpoint
    resume_epoch = None
    if args.resume:
        resume_epoch = resume_checkpoint(model, args.resume, optimizer=optimizer, loss_scaler=loss_scaler,
                                         log_info=args.local_rank == 0)

    # setup distributed training
    if args.distributed:
        if has_apex and use_amp == "apex":
            # Apex DDP preferred unless native amp is activated
            model = ApexDDP(model, delay_allreduce=True)
        else:
            model = NativeDDP(model, device_ids=[args.local_rank], find_unused_parameters=True)

    lr_scheduler, num_epochs = create_scheduler(args, optimizer)
    start_epoch = resume_epoch if resume_epoch is not None else 0
    if lr_scheduler is not None and start_epoch > 0:
        lr_scheduler.step(start_epoch)

    dataset_train = create_carla_dataset(args.dataset, root=args.data_dir, towns=args.train_towns, batch_size=args.batch_size)
    dataset_eval = create_carla_dataset(args.dataset, root=args.data_dir, towns=args.val_towns, batch_size=args.batch_size)
    loader_train = create_carla_loader(dataset_train, batch_size=args.batch_size, is_training=True,
                                       num_workers=args.workers, distributed=args.distributed,
                                       pin_memory=args.pin_mem)
    loader_eval = create_carla_loader(dataset_eval, batch_size=args.batch_size,
                                      is_training=False, num_workers=args.workers, distributed=args.distributed,
                                      pin_memory=args.pin_mem)

    l1_loss = torch.nn.SmoothL1Loss if args.smoothed_l1 else torch.nn.L1Loss
    cls_loss = SoftTargetCrossEntropy().cuda()
    junction_loss = nn.CrossEntropyLoss(weight=torch.tensor(args.junction_weights)).cuda()
    train_loss_fns = {
        "traffic": MVTL1Loss(1.0, l1_loss=l1_loss),
        "waypoints": WaypointL1Loss(l1_loss=l1_loss),
        "cls": cls_loss,
        "stop_cls": cls_loss,
        "junction": junction_loss,
    }
    eval_loss_fns = train_loss_fns

    # setup checkpoint saver and eval metric tracking
    saver = None
    output_dir = None
    if args.rank == 0:
        exp_name = "-".join([datetime.now().strftime("%Y%m%d-%H%M%S"), safe_model_name(args.model)])
        output_dir = get_outdir(args.output if args.output else "./output", exp_name)
        saver = CheckpointSaver(model=model, optimizer=optimizer, args=args, amp_scaler=loss_scaler,
                                checkpoint_dir=output_dir, recovery_dir=output_dir, decreasing=True,
                                max_history=5)
        with open(os.path.join(output_dir, "args.yaml"), "w") as f:
            f.write(args_text)

    try:
        for epoch in range(start_epoch, num_epochs):
            if args.distributed and hasattr(loader_train.sampler, "set_epoch"):
                loader_train.sampler.set_epoch(epoch)

            train_metrics = train_one_epoch(epoch, model, loader_train, optimizer, train_loss_fns, args,
                                            lr_scheduler=lr_scheduler, amp_autocast=amp_autocast,
                                            loss_scaler=loss_scaler)

            if args.distributed:
                distribute_bn(model, args.world_size, True)

            eval_metrics = validate(model, loader_eval, eval_loss_fns, args, amp_autocast=amp_autocast)

            if lr_scheduler is not None:
                lr_scheduler.step(epoch + 1, eval_metrics[args.eval_metric])

            if output_dir is not None:
                update_summary(epoch, train_metrics, eval_metrics, os.path.join(output_dir, "summary.csv"),
                               write_header=epoch == start_epoch)
            if saver is not None:
                saver.save_checkpoint(epoch, metric=eval_metrics[args.eval_metric])
    except KeyboardInterrupt:
        pass


def compute_losses(output, target, loss_fns):
    loss_traffic, loss_velocity = loss_fns["traffic"](output[0], target[4])
    loss_waypoints = loss_fns["waypoints"](output[1], target[1])
    loss_junction = loss_fns["junction"](output[2], target[2])
    on_road_mask = target[2] < 0.5
    loss_traffic_light_state = loss_fns["cls"](output[3], target[3])
    loss_stop_sign = loss_fns["stop_cls"](output[4], target[6])
    loss = (loss_traffic * 0.5 + loss_velocity * 0.05 + loss_waypoints * 0.2 + loss_junction * 0.05
            + loss_traffic_light_state * 0.1 + loss_stop_sign * 0.01)
    return loss, on_road_mask


def train_one_epoch(epoch, model, loader, optimizer, loss_fns, args, lr_scheduler=None, amp_autocast=suppress,
                    loss_scaler=None):
    second_order = hasattr(optimizer, "is_second_order") and optimizer.is_second_order
    batch_time_m = AverageMeter()
    losses_m = AverageMeter()

    model.train()
    end = time.time()
    last_idx = len(loader) - 1
    num_updates = epoch * len(loader)
    for batch_idx, (input, target) in enumerate(loader):
        last_batch = batch_idx == last_idx
        input = to_device_dict(input)
        target = [x.cuda() if isinstance(x, torch.Tensor) else x for x in target]

        with amp_autocast():
            output = model(input)
            loss, _ = compute_losses(output, target, loss_fns)

        if not args.distributed:
            losses_m.update(loss.item(), args.batch_size)

        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(loss, optimizer, clip_grad=args.clip_grad, clip_mode=args.clip_mode,
                        parameters=model_parameters(model, exclude_head="agc" in args.clip_mode),
                        create_graph=second_order)
        else:
            loss.backward(create_graph=second_order)
            if args.clip_grad is not None:
                dispatch_clip_grad(model_parameters(model, exclude_head="agc" in args.clip_mode),
                                   value=args.clip_grad, mode=args.clip_mode)
            optimizer.step()

        torch.cuda.synchronize()
        num_updates += 1
        batch_time_m.update(time.time() - end)
        if last_batch or batch_idx % args.log_interval == 0:
            lrl = [param_group["lr"] for param_group in optimizer.param_groups]
            lr = sum(lrl) / len(lrl)
            if args.distributed:
                reduced_loss = reduce_tensor(loss.data, args.world_size)
                losses_m.update(reduced_loss.item(), args.batch_size)
            if args.local_rank == 0:
                _logger.info("Train: {} [{:>4d}/{} ({:>3.0f}%)]  Loss: {loss.val:>9.6f} ({loss.avg:>6.4f})  "
                             "Time: {batch_time.val:.3f}s  LR: {lr:.3e}  Mem: {mem:.0f}MB".format(
                                 epoch, batch_idx, len(loader), 100.0 * batch_idx / last_idx, loss=losses_m,
                                 batch_time=batch_time_m, lr=lr,
                                 mem=torch.cuda.max_memory_allocated() / 1024.0 ** 2))

        if lr_scheduler is not None:
            lr_scheduler.step_update(num_updates=num_updates, metric=losses_m.avg)
        end = time.time()

    return OrderedDict([("loss", losses_m.avg)])


def validate(model, loader, loss_fns, args, amp_autocast=suppress, log_suffix=""):
    losses_m = AverageMeter()
    l1_errorm = AverageMeter()
    model.eval()
    with torch.no_grad():
        for batch_idx, (input, target) in enumerate(loader):
            input = to_device_dict(input)
            target = [x.cuda() if isinstance(x, torch.Tensor) else x for x in target]  # noqa: E501 eval copy

            with amp_autocast():
                output = model(input)
            loss, _ = compute_losses(output, target, loss_fns)
            l1_error = F.l1_loss(output[1], target[1])
            if args.distributed:
                loss, l1_error = reduce_tensor(loss.data, args.world_size), reduce_tensor(l1_error.data, args.world_size)
            losses_m.update(loss.item(), args.batch_size)
            l1_errorm.update(l1_error.item(), args.batch_size)

    return OrderedDict([("loss", losses_m.avg), ("l1_error", l1_errorm.avg)])


if __name__ == "__main__":
    main()
