import datetime
import os
import time
import warnings

import matplotlib

matplotlib.use("agg")

import numpy as np
import torch
import torch.utils.data
import wandb

import eqnet
import utils
from eqnet.data import AutoEncoderIterableDataset, DASIterableDataset, SeismicNetworkIterableDataset, SeismicTraceIterableDataset
from eqnet.models.unet import moving_normalize
from eqnet.utils import plot_das, plot_phasenet

matplotlib.use("agg")
warnings.filterwarnings("ignore", ".*Length of IterableDataset.*")


def evaluate(model, data_loader, scaler, args, epoch=0, total_samples=1):
    model.eval()
    metric_logger = utils.MetricLogger(delimiter="  ")
    header = "Test:"
    processed_samples = 0
    with torch.inference_mode():
        for meta in metric_logger.log_every(data_loader, args.print_freq, header):
            with torch.cuda.amp.autocast(enabled=args.amp):
                output = model(meta)
            loss = output["loss"]
            batch_size = meta["data"].shape[0]
            metric_logger.meters["loss"].update(loss.item(), n=batch_size)
            processed_samples += batch_size

    metric_logger.synchronize_between_processes()
    print(f"Test loss = {metric_logger.loss.global_avg:.3e}")
    if args.wandb and utils.is_main_process():
        wandb.log({"test/test_loss": metric_logger.loss.global_avg, "test/epoch": epoch})
    return metric_logger


def train_one_epoch(model, optimizer, lr_scheduler, data_loader, device, epoch, total_samples, args,
                    model_ema=None, scaler=None):
    model.train()
    metric_logger = utils.MetricLogger(delimiter="  ")
    metric_logger.add_meter("lr", utils.SmoothedValue(window_size=1, fmt="{value}"))
    header = f"Epoch: [{epoch}]"

    processed_samples = 0
    for i, meta in enumerate(metric_logger.log_every(data_loader, args.print_freq, header)):
        with torch.cuda.amp.autocast(enabled=scaler is not None):
            output = model(meta)
        loss = output["loss"]

        optimizer.zero_grad()
        if scaler is not None:
            scaler.scale(loss).backward()
            if args.clip_grad_norm is not None:
                # we should unscale the gradients of optimizer's assigned params if do gradient clipping
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad_norm)
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            if args.clip_grad_norm is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad_norm)
            optimizer.step()

        if model_ema and i % args.model_ema_steps == 0:
            model_ema.update_parameters(model)
            if epoch < args.lr_warmup_epochs:
                # Reset ema buffer to keep copying weights during warmup period
                model_ema.n_averaged.fill_(0)

        lr_scheduler.step()
        batch_size = meta["data"].shape[0]
        processed_samples += batch_size
        metric_logger.update(loss=loss.item(), lr=optimizer.param_groups[0]["lr"])

        if args.wandb and utils.is_main_process() and i % args.print_freq == 0:
            wandb.log({"train/train_loss": loss.item(), "train/lr": optimizer.param_groups[0]["lr"],
                       "train/epoch": epoch, "train/batch": i})

    if args.plot and utils.is_main_process():
        if args.model == "phasenet":
            plot_phasenet(meta, output["phase"].float().cpu(), epoch=epoch, figure_dir=args.figure_dir)
        elif args.model == "phasenet_das":
            plot_das(meta, output["phase"].float().cpu(), epoch=epoch, figure_dir=args.figure_dir)


def main(args):
    if args.output_dir:
        utils.mkdir(args.output_dir)
        args.figure_dir = os.path.join(args.output_dir, "figures")
        utils.mkdir(args.figure_dir)

    utils.init_distributed_mode(args)
    print(args)

    if args.distributed:
        rank = utils.get_rank()
        world_size = utils.get_world_size()
    else:
        rank, world_size = 0, 1

    device = torch.device(args.device)

    if args.use_deterministic_algorithms:
        torch.backends.cudnn.benchmark = False
        torch.use_deterministic_algorithms(True)
    else:
        torch.backends.cudnn.benchmark = True

    if args.model in ["phasenet", "phasenet_plus"]:
        dataset = SeismicTraceIterableDataset(
            data_path=args.data_path, data_list=args.data_list, hdf5_file=args.hdf5_file,
            format="h5", training=True, stack_event=args.stack_event, flip_polarity=args.flip_polarity,
            drop_channel=args.drop_channel, rank=rank, world_size=world_size,
        )
    elif args.model == "phasenet_das":
        dataset = DASIterableDataset(
            data_path=args.data_path, label_path=args.label_path, noise_list=args.noise_list,
            format="h5", nx=args.nx, nt=args.nt, training=True, rank=rank, world_size=world_size,
        )
    elif args.model == "autoencoder":
        dataset = AutoEncoderIterableDataset(data_path=args.data_path, format="h5", training=True)
    else:
        raise ValueError(f"Unknown model {args.model}")

    train_sampler = None
    data_loader = torch.utils.data.DataLoader(
        dataset,
        batch_size=args.batch_size,
        sampler=train_sampler,
        num_workers=args.workers,
        collate_fn=None,
        drop_last=True,
        pin_memory=True,
    )

    model = eqnet.models.__dict__[args.model](
        backbone=args.backbone, in_channels=1, out_channels=3,
        use_polarity=args.use_polarity, init_features=args.init_features,
    )
    model.to(device)

    if args.distributed and args.sync_bn:
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=args.weight_decay)

    scaler = torch.cuda.amp.GradScaler() if args.amp else None

    iters_per_epoch = len(data_loader) if hasattr(dataset, "__len__") else args.iters_per_epoch
    args.epochs = args.epochs if args.epochs > 0 else 1
    total_iters = iters_per_epoch * args.epochs
    main_lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda x: (1 - x / (iters_per_epoch * (args.epochs - args.lr_warmup_epochs))) ** 0.9
    )

    if args.lr_warmup_epochs > 0:
        warmup_iters = iters_per_epoch * args.lr_warmup_epochs
        args.lr_warmup_method = args.lr_warmup_method.lower()
        if args.lr_warmup_method == "linear":
            warmup_lr_scheduler = torch.optim.lr_scheduler.LinearLR(
                optimizer, start_factor=args.lr_warmup_decay, total_iters=warmup_iters
            )
        elif args.lr_warmup_method == "constant":
            warmup_lr_scheduler = torch.optim.lr_scheduler.ConstantLR(
                optimizer, factor=args.lr_warmup_decay, total_iters=warmup_iters
            )
        else:
            raise RuntimeError(
                f"Invalid warmup lr method '{args.lr_warmup_method}'. Only linear and constant are supported."
            )
        lr_scheduler = torch.optim.lr_scheduler.SequentialLR(
            optimizer, schedulers=[warmup_lr_scheduler, main_lr_scheduler], milestones=[warmup_iters]
        )
    else:
        lr_scheduler = main_lr_scheduler

    model_without_ddp = model
    if args.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu])
        model_without_ddp = model.module

    model_ema = None
    if args.model_ema:
        adjust = world_size * args.batch_size * args.model_ema_steps / args.epochs
        alpha = 1.0 - args.model_ema_decay
        alpha = min(1.0, alpha * adjust)
        model_ema = utils.ExponentialMovingAverage(model_without_ddp, device=device, decay=1.0 - alpha)

    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model_without_ddp.load_state_dict(checkpoint["model"])
        if not args.test_only:
            optimizer.load_state_dict(checkpoint["optimizer"])
            lr_scheduler.load_state_dict(checkpoint["lr_scheduler"])
        args.start_epoch = checkpoint["epoch"] + 1
        if model_ema:
            model_ema.load_state_dict(checkpoint["model_ema"])
        if scaler:
            scaler.load_state_dict(checkpoint["scaler"])

    if args.wandb and utils.is_main_process():
        wandb.init(project=args.wandb_project, name=args.wandb_name, entity=args.wandb_entity, config=args)
        wandb.watch(model_without_ddp, log="all", log_freq=args.print_freq)

    print("Start training")
    start_time = time.time()
    best_loss = float("inf")
    for epoch in range(args.start_epoch, args.epochs):
        if args.distributed and train_sampler is not None:
            train_sampler.set_epoch(epoch)
        train_one_epoch(model, optimizer, lr_scheduler, data_loader, device, epoch, total_iters, args,
                        model_ema, scaler)
        checkpoint = {
            "model": model_without_ddp.state_dict(),
            "optimizer": optimizer.state_dict(),
            "lr_scheduler": lr_scheduler.state_dict(),
            "epoch": epoch,
            "args": args,
        }
        if model_ema:
            checkpoint["model_ema"] = model_ema.state_dict()
        if scaler:
            checkpoint["scaler"] = scaler.state_dict()
        utils.save_on_master(checkpoint, os.path.join(args.output_dir, "checkpoint.pth"))
        if epoch % args.save_every == 0:
            utils.save_on_master(checkpoint, os.path.join(args.output_dir, f"model_{epoch}.pth"))

    total_time = time.time() - start_time
    total_time_str = str(datetime.timedelta(seconds=int(total_time)))
    print(f"Training time {total_time_str}")


def get_args_parser(add_help=True):
    import argparse

    parser = argparse.ArgumentParser(description="PyTorch Detection Training", add_help=add_help)

    parser.add_argument("--model", default="phasenet", type=str, help="model name")
    parser.add_argument("--backbone", default="unet", type=str, help="model backbone")
    parser.add_argument("--init-features", default=8, type=int, help="number of features in the first layer")
    parser.add_argument("--use-polarity", action="store_true", help="predict first-motion polarity")
    parser.add_argument("--data-path", default="./", type=str, help="dataset path")
    parser.add_argument("--label-path", default="./", type=str, help="label path for DAS data")
    parser.add_argument("--noise-list", default=None, type=str, help="noise list for DAS data")
    parser.add_argument("--data-list", default=None, type=str, help="data list")
    parser.add_argument("--hdf5-file", default=None, type=str, help="hdf5 file for training")
    parser.add_argument("--stack-event", action="store_true", help="stack events for data augmentation")
    parser.add_argument("--flip-polarity", action="store_true", help="flip polarity for data augmentation")
    parser.add_argument("--drop-channel", action="store_true", help="drop channels for data augmentation")
    parser.add_argument("--nx", default=1024, type=int)
    parser.add_argument("--nt", default=3072, type=int)
    parser.add_argument("--device", default="cuda", type=str, help="device (Use cuda or cpu Default: cuda)")
    parser.add_argument("-b", "--batch-size", default=8, type=int, help="images per gpu, the total batch size is $NGPU x batch_size")
    parser.add_argument("--epochs", default=100, type=int, metavar="N", help="number of total epochs to run")
    parser.add_argument("--iters-per-epoch", default=1000, type=int)
    parser.add_argument("-j", "--workers", default=4, type=int, metavar="N", help="number of data loading workers (default: 4)")
    parser.add_argument("--lr", default=0.01, type=float, help="initial learning rate")
    parser.add_argument("--wd", "--weight-decay", default=1e-4, type=float, metavar="W",
                        help="weight decay (default: 1e-4)", dest="weight_decay")
    parser.add_argument("--lr-warmup-epochs", default=0, type=int, help="the number of epochs to warmup (default: 0)")
    parser.add_argument("--lr-warmup-method", default="linear", type=str, help="the warmup method (default: linear)")
    parser.add_argument("--lr-warmup-decay", default=0.01, type=float, help="the decay for lr")
    parser.add_argument("--clip-grad-norm", default=None, type=float, help="the maximum gradient norm (default None)")
    parser.add_argument("--print-freq", default=10, type=int, help="print frequency")
    parser.add_argument("--save-every", default=1, type=int)
    parser.add_argument("--output-dir", default="./output", type=str, help="path to save outputs")
    parser.add_argument("--resume", default="", type=str, help="path of checkpoint")
    parser.add_argument("--start-epoch", default=0, type=int, metavar="N", help="start epoch")
    parser.add_argument("--sync-bn", action="store_true", help="Use sync batch norm")
    parser.add_argument("--test-only", action="store_true", help="Only test the model")
    parser.add_argument("--plot", action="store_true", help="plot figures")
    parser.add_argument("--model-ema", action="store_true", help="enable tracking Exponential Moving Average of model parameters")
    parser.add_argument("--model-ema-steps", type=int, default=32)
    parser.add_argument("--model-ema-decay", type=float, default=0.99998)
    parser.add_argument("--use-deterministic-algorithms", action="store_true", help="Forces the use of deterministic algorithms only.")

    # distributed training parameters
    parser.add_argument("--world-size", default=1, type=int, help="number of distributed processes")
    parser.add_argument("--dist-url", default="env://", type=str, help="url used to set up distributed training")

    # Mixed precision training parameters
    parser.add_argument("--amp", action="store_true", help="Use torch.cuda.amp for mixed precision training")

    # wandb
    parser.add_argument("--wandb", action="store_true", help="use wandb")
    parser.add_argument("--wandb-project", default="eqnet", type=str)
    parser.add_argument("--wandb-name", default=None, type=str)
    parser.add_argument("--wandb-entity", default=None, type=str)
    return parser


if __name__ == "__main__":
    args = get_args_parser().parse_args()
    main(args)
