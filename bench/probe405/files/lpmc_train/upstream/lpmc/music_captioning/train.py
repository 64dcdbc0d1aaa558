import argparse
import builtins
import math
import os
import random
import shutil
import time
import warnings

import torch
import torch.nn as nn
import torch.nn.parallel
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.optim
import torch.multiprocessing as mp
import torch.utils.data
import torch.utils.data.distributed

from lpmc.music_captioning.datasets.mc import MC_Dataset
from lpmc.music_captioning.model.bart import BartCaptionModel
from lpmc.utils.train_utils import Logger, AverageMeter, ProgressMeter, EarlyStopping, save_hparams
from lpmc.utils.eval_utils import load_pretrained, print_model_params
from omegaconf import OmegaConf

random.seed(42)
torch.manual_seed(42)
cudnn.deterministic = True

parser = argparse.ArgumentParser(description="PyTorch MSD Training")
parser.add_argument("--data_dir", type=str, default="../../dataset")
parser.add_argument("--framework", type=str, default="pretrain")
parser.add_argument("--arch", default="transformer")
parser.add_argument("-j", "--workers", default=12, type=int, metavar="N",
                    help="number of data loading workers")
parser.add_argument("--epochs", default=100, type=int, metavar="N",
                    help="number of total epochs to run")
parser.add_argument("--warmup_epochs", default=1, type=int, metavar="N",
                    help="number of total epochs to run")
parser.add_argument("--start-epoch", default=0, type=int, metavar="N",
                    help="manual epoch number (useful on restarts)")
parser.add_argument("-b", "--batch-size", default=256, type=int, metavar="N")
parser.add_argument("--world-size", default=1, type=int,
                    help="number of nodes for distributed training")
parser.add_argument("--rank", default=0, type=int,
                    help="node rank for distributed training")
parser.add_argument("--dist-url", default="tcp://localhost:12312", type=str,
                    help="url used to set up distributed training")
parser.add_argument("--dist-backend", default="nccl", type=str,
                    help="distributed backend")
parser.add_argument("--seed", default=None, type=int,
                    help="seed for initializing training. ")
parser.add_argument("--gpu", default=None, type=int,
                    help="GPU id to use.")
parser.add_argument("--print_freq", default=10, type=int)
parser.add_argument("--multiprocessing-distributed", action="store_false",
                    help="Use multi-processing distributed training to launch "
                         "N processes per node, which has N GPUs. This is the "
                         "fastest way to use PyTorch for either single node or "
                         "multi node data parallel training")
parser.add_argument("--lr", "--learning-rate", default=1e-4, type=float, metavar="LR",
                    help="initial learning rate", dest="lr")
parser.add_argument("--min_lr", default=1e-9, type=float)
parser.add_argument("--cos", default=True, type=bool)
parser.add_argument("--label_smoothing", default=0.1, type=float)
parser.add_argument("--max_length", default=128, type=int)
parser.add_argument("--bart_pretrain", default=False, type=bool)
parser.add_argument("--caption_type", default="lp_music_caps", type=str)


def main():
    args = parser.parse_args()

    if args.seed is not None:
        random.seed(args.seed)
        torch.manual_seed(args.seed)

    if args.dist_url == "env://" and args.world_size == -1:
        args.world_size = int(os.environ["WORLD_SIZE"])

    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    ngpus_per_node = torch.cuda.device_count()

    if args.multiprocessing_distributed:
        # Since we have ngpus_per_node processes per node, the total world_size
        # needs to be adjusted accordingly
        args.world_size = ngpus_per_node * args.world_size
        # Use torch.multiprocessing.spawn to launch distributed processes: the
        # main_worker process function
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        # Simply call main_worker function
        main_worker(args.gpu, ngpus_per_node, args)


def main_worker(gpu, ngpus_per_node, args):
    args.gpu = gpu
    # suppress printing if not master
    if args.multiprocessing_distributed and args.gpu != 0:
        def print_pass(*args):
            pass
        builtins.print = print_pass

    if args.gpu is not None:
        print("Use GPU: {} for training".format(args.gpu))

    if args.distributed:
        if args.dist_url == "env://" and args.rank == -1:
            args.rank = int(os.environ["RANK"])
        if args.multiprocessing_distributed:
            # For multiprocessing distributed training, rank needs to be the
            # global rank among all the processes
            args.rank = args.rank * ngpus_per_node + gpu
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                                world_size=args.world_size, rank=args.rank)

    model = BartCaptionModel(max_length=args.max_length, label_smoothing=args.label_smoothing)
    print_model_params(model)

    if args.bart_pretrain:
        pretrain_dir = f"exp/pretrain/{args.caption_type}/"
        config = OmegaConf.load(os.path.join(pretrain_dir, "hparams.yaml"))
        model, _ = load_pretrained(args, pretrain_dir, model, model_types="last", mdp=config.multiprocessing_distributed)

    train_dataset = MC_Dataset(
        data_path=args.data_dir,
        split="train",
        caption_type=args.caption_type,
    )

    if args.distributed:
        # For multiprocessing distributed, DistributedDataParallel constructor
        # should always set the single device scope, otherwise,
        # DistributedDataParallel will use all available devices.
        if args.gpu is not None:
            torch.cuda.set_device(args.gpu)
            model.cuda(args.gpu)
            # When using a single GPU per process and per
            # DistributedDataParallel, we need to divide the batch size
            # ourselves based on the total number of GPUs we have
            args.batch_size = int(args.batch_size / ngpus_per_node)
            args.workers = int((args.workers + ngpus_per_node - 1) / ngpus_per_node)
            model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu], find_unused_parameters=True)
        else:
            model.cuda()
            model = torch.nn.parallel.DistributedDataParallel(model, find_unused_parameters=True)
        train_sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
    elif args.gpu is not None:
        torch.cuda.set_device(args.gpu)  # single-GPU, no DDP
        model = model.cuda(args.gpu)
        train_sampler = None
    else:
        model = torch.nn.DataParallel(model).cuda()
        train_sampler = None

    train_loader = torch.utils.data.DataLoader(
        train_dataset, batch_size=args.batch_size, shuffle=(train_sampler is None),
        num_workers=args.workers, pin_memory=True, sampler=train_sampler, drop_last=True)

    optimizer = torch.optim.AdamW(model.parameters(), args.lr)
    earlystopping_callback = EarlyStopping()
    cudnn.benchmark = True

    save_dir = f"exp/{args.framework}/{args.caption_type}/"
    logger = Logger(save_dir)
    save_hparams(args, save_dir)

    for epoch in range(args.start_epoch, args.epochs):
        if args.distributed:
            train_sampler.set_epoch(epoch)
        train(train_loader, model, optimizer, epoch, logger, args)

    torch.save({"epoch": epoch, "state_dict": model.state_dict(), "optimizer": optimizer.state_dict()},
               f"{save_dir}/last.pth")
    print("We are at epoch:", epoch)


def train(train_loader, model, optimizer, epoch, logger, args):
    train_losses = AverageMeter("Train Loss", ":.4e")
    progress = ProgressMeter(len(train_loader), [train_losses], prefix="Epoch: [{}]".format(epoch))
    iters_per_epoch = len(train_loader)
    model.train()
    for data_iter_step, batch in enumerate(train_loader):
        lr = adjust_learning_rate(optimizer, data_iter_step / iters_per_epoch + epoch, args)
        fname, text, audio_embs = batch
        if args.gpu is not None:
            audio_embs = audio_embs.cuda(args.gpu, non_blocking=True)
        # compute output
        loss = model(audio=audio_embs, text=text)
        train_losses.step(loss.item(), audio_embs.size(0))
        logger.log_train_loss(loss, epoch * iters_per_epoch + data_iter_step)
        logger.log_learning_rate(lr, epoch * iters_per_epoch + data_iter_step)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if data_iter_step % args.print_freq == 0:
            progress.display(data_iter_step)
    train_losses.synchronize_between_processes()
    return train_losses.avg


def adjust_learning_rate(optimizer, epoch, args):
    """Decay the learning rate with half-cycle cosine after warmup"""
    if epoch < args.warmup_epochs:
        lr = args.lr * epoch / args.warmup_epochs
    else:
        lr = args.min_lr + (args.lr - args.min_lr) * 0.5 * \
            (1. + math.cos(math.pi * (epoch - args.warmup_epochs) / (args.epochs - args.warmup_epochs)))
    for param_group in optimizer.param_groups:
        param_group["lr"] = lr
    return lr


if __name__ == "__main__":
    main()
