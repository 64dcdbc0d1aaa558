#!/usr/bin/env python3
""" MiVOLO training script

Adapted from the timm ImageNet training script (Ross Wightman) for age & gender regression
on IMDB-clean / UTKFace / Lagenda. Supports distributed training through torchrun and
native AMP or NVIDIA apex AMP.
"""
import argparse
import logging
import os
import time
from collections import OrderedDict
from contextlib import suppress
from datetime import datetime

import torch
import torch.nn as nn
import torchvision.utils
import yaml
from torch.nn.parallel import DistributedDataParallel as NativeDDP

from timm import utils
from timm.layers import convert_splitbn_model, convert_sync_batchnorm
from timm.models import model_parameters, resume_checkpoint, safe_model_name
from timm.optim import create_optimizer_v2, optimizer_kwargs
from timm.scheduler import create_scheduler_v2, scheduler_kwargs
from timm.utils import ApexScaler, NativeScaler

from mivolo.data.dataset import build as build_dataset
from mivolo.data.loader import create_loader
from mivolo.model.create_timm_model import create_model
from mivolo.model.mi_volo import Meta
from mivolo.loss import WeightedMSE, cumulative_score_and_mae

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

try:
    import wandb

    has_wandb = True
except ImportError:
    has_wandb = False

torch.backends.cudnn.benchmark = True
_logger = logging.getLogger("train")

# The first arg parser parses out only the --config argument, this argument is used to
# load a yaml file containing key-values that override the defaults for the main parser below
config_parser = parser = argparse.ArgumentParser(description="Training Config", add_help=False)
parser.add_argument("-c", "--config", default="", type=str, metavar="FILE",
                    help="YAML config file specifying default arguments")

parser = argparse.ArgumentParser(description="MiVOLO Training")

# Dataset parameters
group = parser.add_argument_group("Dataset parameters")
group.add_argument("data_dir", metavar="DIR", help="path to dataset")
group.add_argument("--dataset-name", default="utk", help="dataset type (utk | imdb | lagenda | fairface)")
group.add_argument("--train-split", metavar="NAME", default="train", help="dataset train split")
group.add_argument("--val-split", metavar="NAME", default="validation", help="dataset validation split")
group.add_argument("--with-persons", action="store_true", default=False, help="train on face+body crops")
group.add_argument("--min-age", type=int, default=0)
group.add_argument("--max-age", type=int, default=95)

# Model parameters
group = parser.add_argument_group("Model parameters")
group.add_argument("--model", default="mivolo_d1_224", type=str, metavar="MODEL")
group.add_argument("--initial-checkpoint", default="", type=str, metavar="PATH")
group.add_argument("--resume", default="", type=str, metavar="PATH")
group.add_argument("--no-resume-opt", action="store_true", default=False)
group.add_argument("--num-classes", type=int, default=3, metavar="N", help="2 gender logits + 1 age")
group.add_argument("--input-size", default=None, nargs=3, type=int, metavar="N N N")
group.add_argument("-b", "--batch-size", type=int, default=128, metavar="N")
group.add_argument("-vb", "--validation-batch-size", type=int, default=None, metavar="N")
group.add_argument("--channels-last", action="store_true", default=False,
                   help="Use channels_last memory layout")
group.add_argument("--grad-accum-steps", type=int, default=1, metavar="N")

# Optimizer / scheduler parameters
group = parser.add_argument_group("Optimizer parameters")
group.add_argument("--opt", default="adamw", type=str, metavar="OPTIMIZER")
group.add_argument("--opt-eps", default=None, type=float, metavar="EPSILON")
group.add_argument("--momentum", type=float, default=0.9, metavar="M")
group.add_argument("--weight-decay", type=float, default=0.05)
group.add_argument("--clip-grad", type=float, default=None, metavar="NORM")
group.add_argument("--clip-mode", type=str, default="norm")
group.add_argument("--sched", type=str, default="cosine", metavar="SCHEDULER")
group.add_argument("--lr", type=float, default=1e-5, metavar="LR")
group.add_argument("--warmup-lr", type=float, default=1e-6, metavar="LR")
group.add_argument("--min-lr", type=float, default=0, metavar="LR")
group.add_argument("--epochs", type=int, default=300, metavar="N")
group.add_argument("--warmup-epochs", type=int, default=5, metavar="N")

# Misc
group = parser.add_argument_group("Miscellaneous parameters")
group.add_argument("--seed", type=int, default=42, metavar="S")
group.add_argument("--log-interval", type=int, default=50, metavar="N")
group.add_argument("--checkpoint-hist", type=int, default=10, metavar="N")
group.add_argument("-j", "--workers", type=int, default=8, metavar="N")
group.add_argument("--amp", action="store_true", default=False,
                   help="use NVIDIA Apex AMP or Native AMP for mixed precision training")
group.add_argument("--apex-amp", action="store_true", default=False)
group.add_argument("--native-amp", action="store_true", default=False)
group.add_argument("--sync-bn", action="store_true", help="Enable NVIDIA Apex or Torch synchronized BatchNorm.")
group.add_argument("--no-ddp-bb", action="store_true", default=False)
group.add_argument("--split-bn", action="store_true", default=False)
group.add_argument("--dist-bn", type=str, default="reduce",
                   help='Distribute BatchNorm stats between nodes after each epoch ("broadcast", "reduce", or "")')
group.add_argument("--recovery-interval", type=int, default=0, metavar="N")
group.add_argument("--pin-mem", action="store_true", default=False,
                   help="Pin CPU memory in DataLoader for more efficient (sometimes) transfer to GPU.")
group.add_argument("--no-prefetcher", action="store_true", default=False)
group.add_argument("--output", default="", type=str, metavar="PATH")
group.add_argument("--experiment", default="", type=str, metavar="NAME")
group.add_argument("--eval-metric", default="mae", type=str, metavar="EVAL_METRIC")
group.add_argument("--local_rank", default=0, type=int)
group.add_argument("--log-wandb", action="store_true", default=False)


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


def main():
    utils.setup_default_logging()
    args, args_text = _parse_args()

    args.prefetcher = not args.no_prefetcher
    args.distributed = False
    if "WORLD_SIZE" in os.environ:
        args.distributed = int(os.environ["WORLD_SIZE"]) > 1
        args.local_rank = int(os.environ.get("LOCAL_RANK", args.local_rank))
    args.device = "cuda:0"
    args.world_size = 1
    args.rank = 0  # global rank
    if args.distributed:
        args.device = "cuda:%d" % args.local_rank
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
        args.world_size = torch.distributed.get_world_size()
        args.rank = torch.distributed.get_rank()
        _logger.info(
            "Training in distributed mode with multiple processes, 1 GPU per process. Process %d, total %d."
            % (args.rank, args.world_size)
        )
    else:
        _logger.info("Training with a single process on 1 GPUs.")
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
        use_amp = "apex"
    elif args.native_amp and has_native_amp:
        use_amp = "native"
    elif args.apex_amp or args.native_amp:
        _logger.warning(
            "Neither APEX or native Torch AMP is available, using float32. "
            "Install NVIDA apex or upgrade to PyTorch 1.6"
        )

    utils.random_seed(args.seed, args.rank)

    model = create_model(
        args.model,
        num_classes=args.num_classes,
        in_chans=6 if args.with_persons else 3,
        pretrained=False,
        checkpoint_path=args.initial_checkpoint,
        filter_keys=["head."],
    )

    if args.local_rank == 0:
        _logger.info(
            f"Model {safe_model_name(args.model)} created, param count:{sum([m.numel() for m in model.parameters()])}"
        )

    data_config = {"input_size": (3, 224, 224), "interpolation": "bicubic",
                   "mean": (0.485, 0.456, 0.406), "std": (0.229, 0.224, 0.225), "crop_pct": 1.0}

    # move model to GPU, enable channels last layout if set
    model.cuda()
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)

    # setup synchronized BatchNorm for distributed training
    if args.distributed and args.sync_bn:
        assert not args.split_bn
        if has_apex and use_amp == "apex":
            # Apex SyncBN preferred unless native amp is activated
            model = convert_syncbn_model(model)
        else:
            model = convert_sync_batchnorm(model)
        if args.local_rank == 0:
            _logger.info(
                "Converted model to use Synchronized BatchNorm. WARNING: You may have issues if using "
                "zero initialized BN layers (enabled by default for ResNets) while sync-bn enabled."
            )

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
    else:
        if args.local_rank == 0:
            _logger.info("AMP not enabled. Training in float32.")

    # optionally resume from a checkpoint
    resume_epoch = None
    if args.resume:
        resume_epoch = resume_checkpoint(
            model,
            args.resume,
            optimizer=None if args.no_resume_opt else optimizer,
            loss_scaler=None if args.no_resume_opt else loss_scaler,
            log_info=args.local_rank == 0,
        )

    # setup distributed training
    if args.distributed:
        if has_apex and use_amp == "apex":
            # Apex DDP preferred unless native amp is activated
            if args.local_rank == 0:
                _logger.info("Using NVIDIA APEX DistributedDataParallel.")
            model = ApexDDP(model, delay_allreduce=True)
        else:
            if args.local_rank == 0:
                _logger.info("Using native Torch DistributedDataParallel.")
            model = NativeDDP(model, device_ids=[args.local_rank], broadcast_buffers=not args.no_ddp_bb)
        # NOTE: EMA model does not need to be wrapped by DDP

    lr_scheduler, num_epochs = create_scheduler_v2(optimizer, **scheduler_kwargs(args))
    start_epoch = 0
    if resume_epoch is not None:
        start_epoch = resume_epoch
    if lr_scheduler is not None and start_epoch > 0:
        lr_scheduler.step(start_epoch)

    dataset_train, dataset_eval = build_dataset(args, data_config)

    loader_train = create_loader(
        dataset_train,
        input_size=data_config["input_size"],
        batch_size=args.batch_size,
        is_training=True,
        use_prefetcher=args.prefetcher,
        mean=data_config["mean"],
        std=data_config["std"],
        num_workers=args.workers,
        distributed=args.distributed,
        pin_memory=args.pin_mem,
        target_type=torch.float,
    )
    loader_eval = create_loader(
        dataset_eval,
        input_size=data_config["input_size"],
        batch_size=args.validation_batch_size or args.batch_size,
        is_training=False,
        use_prefetcher=args.prefetcher,
        mean=data_config["mean"],
        std=data_config["std"],
        num_workers=args.workers,
        distributed=args.distributed,
        pin_memory=args.pin_mem,
        target_type=torch.float,
    )

    train_loss_fn = WeightedMSE(with_gender=args.num_classes == 3).cuda()
    validate_loss_fn = WeightedMSE(with_gender=args.num_classes == 3).cuda()

    # setup checkpoint saver and eval metric tracking
    eval_metric = args.eval_metric
    best_metric = None
    best_epoch = None
    saver = None
    output_dir = None
    if args.rank == 0:
        if args.experiment:
            exp_name = args.experiment
        else:
            exp_name = "-".join([datetime.now().strftime("%Y%m%d-%H%M%S"), safe_model_name(args.model)])
        output_dir = utils.get_outdir(args.output if args.output else "./output/train", exp_name)
        decreasing = True if eval_metric in ("loss", "mae") else False
        saver = utils.CheckpointSaver(
            model=model, optimizer=optimizer, args=args, amp_scaler=loss_scaler,
            checkpoint_dir=output_dir, recovery_dir=output_dir, decreasing=decreasing,
            max_history=args.checkpoint_hist,
        )
        with open(os.path.join(output_dir, "args.yaml"), "w") as f:
            f.write(args_text)

    try:
        for epoch in range(start_epoch, num_epochs):
            if args.distributed and hasattr(loader_train.sampler, "set_epoch"):
                loader_train.sampler.set_epoch(epoch)

            train_metrics = train_one_epoch(
                epoch, model, loader_train, optimizer, train_loss_fn, args,
                lr_scheduler=lr_scheduler, saver=saver, output_dir=output_dir,
                amp_autocast=amp_autocast, loss_scaler=loss_scaler,
            )

            if args.distributed and args.dist_bn in ("broadcast", "reduce"):
                if args.local_rank == 0:
                    _logger.info("Distributing BatchNorm running means and vars")
                utils.distribute_bn(model, args.world_size, args.dist_bn == "reduce")

            eval_metrics = validate(model, loader_eval, validate_loss_fn, args, amp_autocast=amp_autocast)

            if output_dir is not None:
                utils.update_summary(
                    epoch, train_metrics, eval_metrics, os.path.join(output_dir, "summary.csv"),
                    write_header=best_metric is None, log_wandb=args.log_wandb and has_wandb,
                )

            if saver is not None:
                # save proper checkpoint with eval metric
                save_metric = eval_metrics[eval_metric]
                best_metric, best_epoch = saver.save_checkpoint(epoch, metric=save_metric)

            if lr_scheduler is not None:
                # step LR for next epoch
                lr_scheduler.step(epoch + 1, eval_metrics[eval_metric])

    except KeyboardInterrupt:
        pass
    if best_metric is not None:
        _logger.info("*** Best metric: {0} (epoch {1})".format(best_metric, best_epoch))


def train_one_epoch(
    epoch, model, loader, optimizer, loss_fn, args, lr_scheduler=None, saver=None, output_dir=None,
    amp_autocast=suppress, loss_scaler=None,
):
    second_order = hasattr(optimizer, "is_second_order") and optimizer.is_second_order
    batch_time_m = utils.AverageMeter()
    data_time_m = utils.AverageMeter()
    losses_m = utils.AverageMeter()

    model.train()

    end = time.time()
    last_idx = len(loader) - 1
    num_updates = epoch * len(loader)
    for batch_idx, (input, target) in enumerate(loader):
        last_batch = batch_idx == last_idx
        data_time_m.update(time.time() - end)
        if not args.prefetcher:
            input, target = input.cuda(), target.cuda()
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
                loss, optimizer, clip_grad=args.clip_grad, clip_mode=args.clip_mode,
                parameters=model_parameters(model, exclude_head="agc" in args.clip_mode),
                create_graph=second_order,
            )
        else:
            loss.backward(create_graph=second_order)
            if args.clip_grad is not None:
                utils.dispatch_clip_grad(
                    model_parameters(model, exclude_head="agc" in args.clip_mode),
                    value=args.clip_grad, mode=args.clip_mode,
                )
            optimizer.step()

        torch.cuda.synchronize()
        num_updates += 1
        batch_time_m.update(time.time() - end)
        if last_batch or batch_idx % args.log_interval == 0:
            lrl = [param_group["lr"] for param_group in optimizer.param_groups]
            lr = sum(lrl) / len(lrl)

            if args.distributed:
                reduced_loss = utils.reduce_tensor(loss.data, args.world_size)
                losses_m.update(reduced_loss.item(), input.size(0))

            if args.local_rank == 0:
                _logger.info(
                    "Train: {} [{:>4d}/{} ({:>3.0f}%)]  "
                    "Loss: {loss.val:#.4g} ({loss.avg:#.3g})  "
                    "Time: {batch_time.val:.3f}s, {rate:>7.2f}/s  "
                    "LR: {lr:.3e}  "
                    "Data: {data_time.val:.3f} ({data_time.avg:.3f})".format(
                        epoch, batch_idx, len(loader), 100.0 * batch_idx / last_idx,
                        loss=losses_m, batch_time=batch_time_m,
                        rate=input.size(0) * args.world_size / batch_time_m.val,
                        lr=lr, data_time=data_time_m,
                    )
                )

        if saver is not None and args.recovery_interval and (last_batch or (batch_idx + 1) % args.recovery_interval == 0):
            saver.save_recovery(epoch, batch_idx=batch_idx)

        if lr_scheduler is not None:
            lr_scheduler.step_update(num_updates=num_updates, metric=losses_m.avg)

        end = time.time()
        # end for

    if hasattr(optimizer, "sync_lookahead"):
        optimizer.sync_lookahead()

    return OrderedDict([("loss", losses_m.avg)])


def validate(model, loader, loss_fn, args, amp_autocast=suppress, log_suffix=""):
    batch_time_m = utils.AverageMeter()
    losses_m = utils.AverageMeter()
    mae_m = utils.AverageMeter()
    gender_acc_m = utils.AverageMeter()

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
            mae, gender_acc = cumulative_score_and_mae(output, target, args.min_age, args.max_age)

            if args.distributed:
                reduced_loss = utils.reduce_tensor(loss.data, args.world_size)
                mae = utils.reduce_tensor(mae, args.world_size)
                gender_acc = utils.reduce_tensor(gender_acc, args.world_size)
            else:
                reduced_loss = loss.data

            torch.cuda.synchronize()  # for accurate batch timing

            losses_m.update(reduced_loss.item(), input.size(0))
            mae_m.update(mae.item(), output.size(0))
            gender_acc_m.update(gender_acc.item(), output.size(0))

            batch_time_m.update(time.time() - end)
            end = time.time()
            if args.local_rank == 0 and (last_batch or batch_idx % args.log_interval == 0):
                log_name = "Test" + log_suffix
                _logger.info(
                    "{0}: [{1:>4d}/{2}]  "
                    "Time: {batch_time.val:.3f} ({batch_time.avg:.3f})  "
                    "Loss: {loss.val:>7.4f} ({loss.avg:>6.4f})  "
                    "MAE: {mae.val:>7.4f} ({mae.avg:>7.4f})  "
                    "Gender acc: {gacc.val:>7.4f} ({gacc.avg:>7.4f})".format(
                        log_name, batch_idx, last_idx, batch_time=batch_time_m,
                        loss=losses_m, mae=mae_m, gacc=gender_acc_m,
                    )
                )

    metrics = OrderedDict([("loss", losses_m.avg), ("mae", mae_m.avg), ("gender_acc", gender_acc_m.avg)])

    return metrics


if __name__ == "__main__":
    main()
