#!/usr/bin/env python3
""" InterFuser Training Script

Derived from the timm ImageNet training script (Ross Wightman). Trains the InterFuser model on
CARLA driving data with distributed data parallel, optional APEX / native AMP and model EMA.

Launch with distributed_train.sh, one process per GPU.
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
from torch.utils.tensorboard import SummaryWriter

from timm.data import create_carla_dataset, create_carla_loader, resolve_data_config
from timm.models import create_model, safe_model_name, resume_checkpoint, load_checkpoint, \
    convert_splitbn_model, model_parameters
from timm.utils import *
from timm.loss import LabelSmoothingCrossEntropy, SoftTargetCrossEntropy, JsdCrossEntropy
from timm.optim import create_optimizer_v2, optimizer_kwargs
from timm.scheduler import create_scheduler
from timm.utils import ApexScaler, NativeScaler

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


# The first arg parser parses out only the --config argument, this argument is used to
# load a yaml file containing key-values that override the defaults for the main parser below
config_parser = parser = argparse.ArgumentParser(description="Training Config", add_help=False)
parser.add_argument("-c", "--config", default="", type=str, metavar="FILE",
                    help="YAML config file specifying default arguments")

parser = argparse.ArgumentParser(description="InterFuser Training")
# Dataset / Model parameters
parser.add_argument("data_dir", metavar="DIR", help="path to dataset")
parser.add_argument("--dataset", "-d", metavar="NAME", default="carla", help="dataset type (default: carla)")
parser.add_argument("--train-towns", type=int, nargs="+", default=[0], help="dataset train towns (default: [0])")
parser.add_argument("--val-towns", type=int, nargs="+", default=[1], help="dataset validation towns (default: [1])")
parser.add_argument("--train-weathers", type=int, nargs="+", default=[0], help="dataset train weathers")
parser.add_argument("--val-weathers", type=int, nargs="+", default=[1], help="dataset validation weathers")
parser.add_argument("--model", default="interfuser_baseline", type=str, metavar="MODEL",
                    help='Name of model to train (default: "interfuser_baseline"')
parser.add_argument("--pretrained", action="store_true", default=False,
                    help="Start with pretrained version of specified network (if avail)")
parser.add_argument("--initial-checkpoint", default="", type=str, metavar="PATH",
                    help="Initialize model from this checkpoint (default: none)")
parser.add_argument("--resume", default="", type=str, metavar="PATH",
                    help="Resume full model and optimizer state from checkpoint (default: none)")
parser.add_argument("--no-resume-opt", action="store_true", default=False,
                    help="prevent resume of optimizer state when resuming model")
parser.add_argument("-b", "--batch-size", type=int, default=32, metavar="N",
                    help="input batch size for training (default: 32)")
parser.add_argument("-vb", "--validation-batch-size-multiplier", type=int, default=1, metavar="N",
                    help="ratio of validation batch size to training batch size (default: 1)")
parser.add_argument("--with-backbone-lr", action="store_true", default=False)
parser.add_argument("--backbone-lr", type=float, default=5e-4, metavar="LR")
parser.add_argument("--freeze-num", type=int, default=-1)
parser.add_argument("--multi-view", action="store_true", default=False)
parser.add_argument("--with-lidar", action="store_true", default=False)
parser.add_argument("--multi-view-input-size", default=None, nargs=3, type=int)
# Optimizer parameters
parser.add_argument("--opt", default="adamw", type=str, metavar="OPTIMIZER", help='Optimizer (default: "adamw"')
parser.add_argument("--opt-eps", default=None, type=float, metavar="EPSILON")
parser.add_argument("--weight-decay", type=float, default=0.05, help="weight decay (default: 0.05)")
parser.add_argument("--clip-grad", type=float, default=None, metavar="NORM")
parser.add_argument("--clip-mode", type=str, default="norm", help='Gradient clipping mode. One of ("norm", "value", "agc")')
# Learning rate schedule parameters
parser.add_argument("--sched", default="cosine", type=str, metavar="SCHEDULER")
parser.add_argument("--lr", type=float, default=5e-4, metavar="LR", help="learning rate (default: 5e-4)")
parser.add_argument("--warmup-lr", type=float, default=1e-6, metavar="LR")
parser.add_argument("--min-lr", type=float, default=1e-5, metavar="LR")
parser.add_argument("--epochs", type=int, default=25, metavar="N")
parser.add_argument("--start-epoch", default=None, type=int, metavar="N")
parser.add_argument("--warmup-epochs", type=int, default=5, metavar="N")
parser.add_argument("--cooldown-epochs", type=int, default=10, metavar="N")
parser.add_argument("--scale", type=float, nargs="+", default=[0.9, 1.1], metavar="PCT")
# Batch norm parameters (only works with gen_efficientnet based models currently)
parser.add_argument("--sync-bn", action="store_true",
                    help="Enable NVIDIA Apex or Torch synchronized BatchNorm.")
parser.add_argument("--dist-bn", type=str, default="",
                    help='Distribute BatchNorm stats between nodes after each epoch ("broadcast", "reduce", or "")')
# Model Exponential Moving Average
parser.add_argument("--model-ema", action="store_true", default=False,
                    help="Enable tracking moving average of model weights")
parser.add_argument("--model-ema-force-cpu", action="store_true", default=False,
                    help="Force ema to be tracked on CPU, rank=0 node only. Disables EMA validation.")
parser.add_argument("--model-ema-decay", type=float, default=0.9998, help="decay factor for model weights moving average")
# Misc
parser.add_argument("--seed", type=int, default=42, metavar="S", help="random seed (default: 42)")
parser.add_argument("--log-interval", type=int, default=50, metavar="N")
parser.add_argument("--recovery-interval", type=int, default=0, metavar="N")
parser.add_argument("--checkpoint-hist", type=int, default=5, metavar="N")
parser.add_argument("-j", "--workers", type=int, default=4, metavar="N",
                    help="how many training processes to use (default: 4)")
parser.add_argument("--save-images", action="store_true", default=False)
parser.add_argument("--amp", action="store_true", default=False,
                    help="use NVIDIA Apex AMP or Native AMP for mixed precision training")
parser.add_argument("--apex-amp", action="store_true", default=False, help="Use NVIDIA Apex AMP mixed precision")
parser.add_argument("--native-amp", action="store_true", default=False, help="Use Native Torch AMP mixed precision")
parser.add_argument("--channels-last", action="store_true", default=False, help="Use channels_last memory layout")
parser.add_argument("--pin-mem", action="store_true", default=False,
                    help="Pin CPU memory in DataLoader for more efficient (sometimes) transfer to GPU.")
parser.add_argument("--no-prefetcher", action="store_true", default=False, help="disable fast prefetcher")
parser.add_argument("--output", default="", type=str, metavar="PATH")
parser.add_argument("--experiment", default="", type=str, metavar="NAME")
parser.add_argument("--eval-metric", default="l1_error", type=str, metavar="EVAL_METRIC")
parser.add_argument("--saver-decreasing", action="store_true", default=False)
parser.add_argument("--local_rank", default=0, type=int)
parser.add_argument("--log-wandb", action="store_true", default=False)


def _parse_args():
    # Do we have a config file to parse?
    args_config, remaining = config_parser.parse_known_args()
    if args_config.config:
        with open(args_config.config, "r") as f:
            cfg = yaml.safe_load(f)
            parser.set_defaults(**cfg)

    # The main arg parser parses the rest of the args, the usual
    # defaults will have been overridden if config file specified.
    args = parser.parse_args(remaining)

    # Cache the args as a text string to save them in the output dir later
    args_text = yaml.safe_dump(args.__dict__, default_flow_style=False)
    return args, args_text


class WaypointL1Loss:
    def __init__(self, l1_loss=torch.nn.L1Loss):
        self.loss = l1_loss(reduction="none")
        self.weights = [0.1407441030399059, 0.13352157985305926, 0.12588535273178575, 0.11775496498388233,
                        0.10901991343009122, 0.09952110967153563, 0.08901438656870617, 0.07708872007078788,
                        0.06294267636589287, 0.04450719328435308]

    def __call__(self, output, target):
        invaild_mask = target.ge(1000)
        output[invaild_mask] = 0
        target[invaild_mask] = 0
        loss = self.loss(output, target)  # shape: n, 12, 2
        loss = torch.mean(loss, (0, 2))  # shape: 12
        loss = loss * torch.tensor(self.weights, device=output.device)
        return torch.mean(loss)


def _to_cuda(x):
    """Recursively move a (possibly nested) batch onto the current GPU."""
    if isinstance(x, (tuple, list)):
        return [_to_cuda(t) for t in x]
    if isinstance(x, dict):
        return {k: (v if isinstance(v, list) else _to_cuda(v)) for k, v in x.items()}
    return x.cuda()


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
        args.device = "cuda:%d" % args.local_rank
        torch.cuda.set_device(args.local_rank)
        torch.distributed.init_process_group(backend="nccl", init_method="env://")
        args.world_size = torch.distributed.get_world_size()
        args.rank = torch.distributed.get_rank()
        _logger.info("Training in distributed mode with multiple processes, 1 GPU per process. Process %d, total %d."
                     % (args.rank, args.world_size))
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
        _logger.warning("Neither APEX or native Torch AMP is available, using float32. "
                        "Install NVIDA apex or upgrade to PyTorch 1.6")

    random_seed(args.seed, args.rank)

    model = create_model(
        args.model,
        pretrained=args.pretrained,
        freeze_num=args.freeze_num,
    )

    if args.local_rank == 0:
        _logger.info("Model %s created, param count:%d" % (safe_model_name(args.model), sum([m.numel() for m in model.parameters()])))

    data_config = resolve_data_config(vars(args), model=model, verbose=args.local_rank == 0)

    # move model to GPU, enable channels last layout if set
    model.cuda()
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)

    # setup synchronized BatchNorm for distributed training
    if args.distributed and args.sync_bn:
        if has_apex and use_amp != "native":
            # Apex SyncBN preferred unless native amp is activated
            model = convert_syncbn_model(model)
        else:
            model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        if args.local_rank == 0:
            _logger.info("Converted model to use Synchronized BatchNorm. WARNING: You may have issues if using "
                         "zero initialized BN layers (enabled by default for ResNets) while sync-bn enabled.")

    if args.with_backbone_lr:
        if args.local_rank == 0:
            _logger.info("CNN backbone and transformer blocks using different learning rates!")
        backbone_linear_probe_parameters = filter(lambda kv: "backbone" in kv[0], model.named_parameters())
        other_linear_probe_parameters = filter(lambda kv: "backbone" not in kv[0], model.named_parameters())
        optimizer = torch.optim.AdamW(
            [
                {"params": [kv[1] for kv in other_linear_probe_parameters], "lr": args.lr},
                {"params": [kv[1] for kv in backbone_linear_probe_parameters], "lr": args.backbone_lr},
            ],
            weight_decay=args.weight_decay,
        )
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
    else:
        if args.local_rank == 0:
            _logger.info("AMP not enabled. Training in float32.")

    # optionally resume from a checkpoint
    resume_epoch = None
    if args.resume:
        resume_epoch = resume_checkpoint(
            model, args.resume,
            optimizer=None if args.no_resume_opt else optimizer,
            loss_scaler=None if args.no_resume_opt else loss_scaler,
            log_info=args.local_rank == 0,
        )

    # setup exponential moving average of model weights, SWA could be used here too
    model_ema = None
    if args.model_ema:
        # Important to create EMA model after cuda(), DP wrapper, and AMP but before SyncBN and DDP wrapper
        model_ema = ModelEmaV2(model, decay=args.model_ema_decay, device="cpu" if args.model_ema_force_cpu else None)
        if args.resume:
            load_checkpoint(model_ema.module, args.resume, use_ema=True)

    # setup distributed training
    if args.distributed:
        if has_apex and use_amp != "native":
            # Apex DDP preferred unless native amp is activated
            if args.local_rank == 0:
                _logger.info("Using NVIDIA APEX DistributedDataParallel.")
            model = ApexDDP(model, delay_allreduce=True)
        else:
            if args.local_rank == 0:
                _logger.info("Using native Torch DistributedDataParallel.")
            model = NativeDDP(model, device_ids=[args.local_rank], find_unused_parameters=True)
        # NOTE: EMA model does not need to be wrapped by DDP

    lr_scheduler, num_epochs = create_scheduler(args, optimizer)
    start_epoch = 0
    if args.start_epoch is not None:
        start_epoch = args.start_epoch
    elif resume_epoch is not None:
        start_epoch = resume_epoch
    if lr_scheduler is not None and start_epoch > 0:
        lr_scheduler.step(start_epoch)

    if args.local_rank == 0:
        _logger.info("Scheduled epochs: {}".format(num_epochs))

    dataset_train = create_carla_dataset(args.dataset, root=args.data_dir, towns=args.train_towns,
                                         weathers=args.train_weathers, batch_size=args.batch_size,
                                         with_lidar=args.with_lidar, multi_view=args.multi_view)
    dataset_eval = create_carla_dataset(args.dataset, root=args.data_dir, towns=args.val_towns,
                                        weathers=args.val_weathers, batch_size=args.batch_size,
                                        with_lidar=args.with_lidar, multi_view=args.multi_view)

    loader_train = create_carla_loader(
        dataset_train,
        input_size=data_config["input_size"],
        batch_size=args.batch_size,
        multi_view_input_size=args.multi_view_input_size,
        is_training=True,
        scale=args.scale,
        num_workers=args.workers,
        distributed=args.distributed,
        pin_memory=args.pin_mem,
    )
    loader_eval = create_carla_loader(
        dataset_eval,
        input_size=data_config["input_size"],
        batch_size=args.validation_batch_size_multiplier * args.batch_size,
        multi_view_input_size=args.multi_view_input_size,
        is_training=False,
        num_workers=args.workers,
        distributed=args.distributed,
        pin_memory=args.pin_mem,
    )

    # setup loss function
    cls_loss = nn.CrossEntropyLoss().cuda()
    train_loss_fns = {
        "traffic": LAVLoss(),
        "waypoints": WaypointL1Loss(l1_loss=torch.nn.SmoothL1Loss),
        "cls": cls_loss,
        "stop_cls": cls_loss,
    }
    validate_loss_fns = train_loss_fns

    # setup checkpoint saver and eval metric tracking
    eval_metric = args.eval_metric
    best_metric = None
    best_epoch = None
    saver = None
    output_dir = None
    writer = None
    if args.rank == 0:
        if args.experiment:
            exp_name = "-".join([datetime.now().strftime("%Y%m%d-%H%M%S"), args.experiment])
        else:
            exp_name = "-".join([datetime.now().strftime("%Y%m%d-%H%M%S"), safe_model_name(args.model)])
        output_dir = get_outdir(args.output if args.output else "./output", exp_name)
        writer = SummaryWriter(log_dir=output_dir)
        decreasing = True if eval_metric == "loss" or args.saver_decreasing else False
        saver = CheckpointSaver(model=model, optimizer=optimizer, args=args, model_ema=model_ema,
                                amp_scaler=loss_scaler, checkpoint_dir=output_dir, recovery_dir=output_dir,
                                decreasing=decreasing, max_history=args.checkpoint_hist)
        with open(os.path.join(output_dir, "args.yaml"), "w") as f:
            f.write(args_text)

    try:
        for epoch in range(start_epoch, num_epochs):
            if args.distributed and hasattr(loader_train.sampler, "set_epoch"):
                loader_train.sampler.set_epoch(epoch)

            train_metrics = train_one_epoch(epoch, model, loader_train, optimizer, train_loss_fns, args,
                                            lr_scheduler=lr_scheduler, saver=saver, output_dir=output_dir,
                                            amp_autocast=amp_autocast, loss_scaler=loss_scaler,
                                            model_ema=model_ema, writer=writer)

            if args.distributed and args.dist_bn in ("broadcast", "reduce"):
                if args.local_rank == 0:
                    _logger.info("Distributing BatchNorm running means and vars")
                distribute_bn(model, args.world_size, args.dist_bn == "reduce")

            eval_metrics = validate(epoch, model, loader_eval, validate_loss_fns, args, writer=writer,
                                    amp_autocast=amp_autocast)

            if lr_scheduler is not None:
                # step LR for next epoch
                lr_scheduler.step(epoch + 1, eval_metrics[eval_metric])

            if saver is not None:
                # save proper checkpoint with eval metric
                save_metric = eval_metrics[eval_metric]
                best_metric, best_epoch = saver.save_checkpoint(epoch, metric=save_metric)

    except KeyboardInterrupt:
        pass
    if best_metric is not None:
        _logger.info("*** Best metric: {0} (epoch {1})".format(best_metric, best_epoch))


def train_one_epoch(epoch, model, loader, optimizer, loss_fns, args, lr_scheduler=None, saver=None, output_dir=None,
                    amp_autocast=suppress, loss_scaler=None, model_ema=None, writer=None):
    second_order = hasattr(optimizer, "is_second_order") and optimizer.is_second_order
    batch_time_m = AverageMeter()
    data_time_m = AverageMeter()
    losses_m = AverageMeter()
    losses_waypoints = AverageMeter()
    losses_traffic = AverageMeter()

    model.train()

    end = time.time()
    last_idx = len(loader) - 1
    num_updates = epoch * len(loader)
    for batch_idx, (input, target) in enumerate(loader):
        last_batch = batch_idx == last_idx
        data_time_m.update(time.time() - end)
        if isinstance(input, (tuple, list)):
            batch_size = input[0].size(0)
        elif isinstance(input, dict):
            batch_size = input[list(input.keys())[0]].size(0)
        else:
            batch_size = input.size(0)
        if not args.prefetcher:
            input = _to_cuda(input)
            target = _to_cuda(target)

        with amp_autocast():
            output = model(input)
            loss_traffic, loss_velocity = loss_fns["traffic"](output[0], target[4])
            loss_waypoints = loss_fns["waypoints"](output[1], target[1])
            on_road_loss = loss_fns["cls"](output[2], target[2])
            stop_sign_loss = loss_fns["stop_cls"](output[4], target[6])
            loss = loss_traffic * 0.5 + loss_waypoints * 0.5 + on_road_loss * 0.2 + stop_sign_loss * 0.01

        if not args.distributed:
            losses_traffic.update(loss_traffic.item(), batch_size)
            losses_waypoints.update(loss_waypoints.item(), batch_size)
            losses_m.update(loss.item(), batch_size)

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

        if model_ema is not None:
            model_ema.update(model)

        torch.cuda.synchronize()  # make batch_time measure the real step time
        num_updates += 1
        batch_time_m.update(time.time() - end)
        if last_batch or batch_idx % args.log_interval == 0:
            lrl = [param_group["lr"] for param_group in optimizer.param_groups]
            lr = sum(lrl) / len(lrl)

            if args.distributed:
                reduced_loss = reduce_tensor(loss.data, args.world_size)
                losses_m.update(reduced_loss.item(), batch_size)

            if args.local_rank == 0:
                _logger.info(
                    "Train: {} [{:>4d}/{} ({:>3.0f}%)]  "
                    "Loss: {loss.val:>9.6f} ({loss.avg:>6.4f})  "
                    "Time: {batch_time.val:.3f}s, {rate:>7.2f}/s  "
                    "LR: {lr:.3e}  "
                    "Data: {data_time.val:.3f} ({data_time.avg:.3f})".format(
                        epoch, batch_idx, len(loader), 100.0 * batch_idx / last_idx, loss=losses_m,
                        batch_time=batch_time_m, rate=batch_size * args.world_size / batch_time_m.val,
                        lr=lr, data_time=data_time_m))
                if writer:
                    writer.add_scalar("train/loss", losses_m.val, num_updates)
                    writer.add_scalar("train/lr", lr, num_updates)
                    writer.add_scalar("train/max_mem_gb", torch.cuda.max_memory_allocated() / 1024 ** 3, num_updates)

        if saver is not None and args.recovery_interval and (last_batch or (batch_idx + 1) % args.recovery_interval == 0):
            saver.save_recovery(epoch, batch_idx=batch_idx)

        if lr_scheduler is not None:
            lr_scheduler.step_update(num_updates=num_updates, metric=losses_m.avg)

        end = time.time()
        # end for

    if hasattr(optimizer, "sync_lookahead"):
        optimizer.sync_lookahead()

    return OrderedDict([("loss", losses_m.avg)])


def validate(epoch, model, loader, loss_fns, args, writer=None, amp_autocast=suppress, log_suffix=""):
    batch_time_m = AverageMeter()
    losses_m = AverageMeter()
    l1_errorm = AverageMeter()

    model.eval()

    end = time.time()
    last_idx = len(loader) - 1
    with torch.no_grad():
        for batch_idx, (input, target) in enumerate(loader):
            last_batch = batch_idx == last_idx
            if not args.prefetcher:
                input = _to_cuda(input)
                target = _to_cuda(target)
            batch_size = target[0].size(0)

            with amp_autocast():
                output = model(input)

            loss_traffic, loss_velocity = loss_fns["traffic"](output[0], target[4])
            loss_waypoints = loss_fns["waypoints"](output[1], target[1])
            loss = loss_traffic * 0.5 + loss_waypoints * 0.5
            l1_error = loss_fns["waypoints"](output[1], target[1])

            if args.distributed:
                reduced_loss = reduce_tensor(loss.data, args.world_size)
                reduced_l1_error = reduce_tensor(l1_error.data, args.world_size)
            else:
                reduced_loss = loss.data
                reduced_l1_error = l1_error.data

            torch.cuda.synchronize()

            losses_m.update(reduced_loss.item(), batch_size)
            l1_errorm.update(reduced_l1_error.item(), batch_size)

            batch_time_m.update(time.time() - end)
            end = time.time()
            if args.local_rank == 0 and (last_batch or batch_idx % args.log_interval == 0):
                log_name = "Test" + log_suffix
                _logger.info(
                    "{0}: [{1:>4d}/{2}]  "
                    "Time: {batch_time.val:.3f} ({batch_time.avg:.3f})  "
                    "Loss: {loss.val:>7.4f} ({loss.avg:>6.4f})  "
                    "L1_error: {l1_error.val:>7.4f} ({l1_error.avg:>6.4f})".format(
                        log_name, batch_idx, last_idx, batch_time=batch_time_m, loss=losses_m, l1_error=l1_errorm))

    if writer:
        writer.add_scalar("val/loss", losses_m.avg, epoch)
        writer.add_scalar("val/l1_error", l1_errorm.avg, epoch)

    metrics = OrderedDict([("loss", losses_m.avg), ("l1_error", l1_errorm.avg)])
    return metrics


if __name__ == "__main__":
    main()
