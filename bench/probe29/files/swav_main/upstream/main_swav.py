# Copyright (c) Facebook, Inc. and its affiliates.
# All rights reserved.
import argparse
import math
import os
import shutil
import time
from logging import getLogger

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.optim
import apex
from apex.parallel.LARC import LARC

from src.utils import (
    bool_flag, initialize_exp, restart_from_checkpoint, fix_random_seeds,
    AverageMeter, init_distributed_mode,
)
from src.multicropdataset import MultiCropDataset
import src.resnet50 as resnet_models

logger = getLogger()

parser = argparse.ArgumentParser(description="Implementation of SwAV")
parser.add_argument("--data_path", type=str, default="/path/to/imagenet")
parser.add_argument("--nmb_crops", type=int, default=[2], nargs="+")
parser.add_argument("--size_crops", type=int, default=[224], nargs="+")
parser.add_argument("--min_scale_crops", type=float, default=[0.14], nargs="+")
parser.add_argument("--max_scale_crops", type=float, default=[1], nargs="+")
parser.add_argument("--crops_for_assign", type=int, nargs="+", default=[0, 1])
parser.add_argument("--temperature", default=0.1, type=float)
parser.add_argument("--epsilon", default=0.05, type=float)
parser.add_argument("--sinkhorn_iterations", default=3, type=int)
parser.add_argument("--feat_dim", default=128, type=int)
parser.add_argument("--nmb_prototypes", default=3000, type=int)
parser.add_argument("--queue_length", type=int, default=0)
parser.add_argument("--epoch_queue_starts", type=int, default=15)
parser.add_argument("--epochs", default=100, type=int)
parser.add_argument("--batch_size", default=64, type=int)
parser.add_argument("--base_lr", default=4.8, type=float)
parser.add_argument("--wd", default=1e-6, type=float)
parser.add_argument("--use_fp16", type=bool_flag, default=True)
parser.add_argument("--sync_bn", type=str, default="pytorch", help="synchronize bn")
parser.add_argument("--syncbn_process_group_size", type=int, default=8)
parser.add_argument("--dist_url", default="env://", type=str)
parser.add_argument("--world_size", default=-1, type=int)
parser.add_argument("--rank", default=0, type=int)
parser.add_argument("--local_rank", default=0, type=int)
parser.add_argument("--arch", default="resnet50", type=str)
parser.add_argument("--hidden_mlp", default=2048, type=int)
parser.add_argument("--workers", default=10, type=int)
parser.add_argument("--dump_path", type=str, default=".")
parser.add_argument("--seed", type=int, default=31)


def main():
    global args
    args = parser.parse_args()
    init_distributed_mode(args)
    fix_random_seeds(args.seed)
    logger, training_stats = initialize_exp(args, "epoch", "loss")

    train_dataset = MultiCropDataset(args.data_path, args.size_crops, args.nmb_crops,
                                     args.min_scale_crops, args.max_scale_crops)
    sampler = torch.utils.data.distributed.DistributedSampler(train_dataset)
    train_loader = torch.utils.data.DataLoader(
        train_dataset, sampler=sampler, batch_size=args.batch_size,
        num_workers=args.workers, pin_memory=True, drop_last=True)

    model = resnet_models.__dict__[args.arch](
        normalize=True, hidden_mlp=args.hidden_mlp,
        output_dim=args.feat_dim, nmb_prototypes=args.nmb_prototypes)
    # synchronize batch norm layers
    if args.sync_bn == "pytorch":
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    elif args.sync_bn == "apex":
        process_group = apex.parallel.create_syncbn_process_group(args.syncbn_process_group_size)
        model = apex.parallel.convert_syncbn_model(model, process_group=process_group)
    model = model.cuda()

    optimizer = torch.optim.SGD(model.parameters(), lr=args.base_lr, momentum=0.9, weight_decay=args.wd)
    optimizer = LARC(optimizer=optimizer, trust_coefficient=0.001, clip=False)

    if args.use_fp16:
        model, optimizer = apex.amp.initialize(model, optimizer, opt_level="O1")
        logger.info("Initializing mixed precision done.")

    model = nn.parallel.DistributedDataParallel(model, device_ids=[args.gpu_to_work_on])

    to_restore = {"epoch": 0}
    restart_from_checkpoint(os.path.join(args.dump_path, "checkpoint.pth.tar"),
                            run_variables=to_restore, state_dict=model, optimizer=optimizer,
                            amp=apex.amp)
    start_epoch = to_restore["epoch"]

    queue_path = os.path.join(args.dump_path, "queue" + str(args.rank) + ".pth")
    queue = torch.load(queue_path)["queue"] if os.path.isfile(queue_path) else None
    args.queue_length -= args.queue_length % (args.batch_size * args.world_size)

    cudnn.benchmark = True
    for epoch in range(start_epoch, args.epochs):
        train_loader.sampler.set_epoch(epoch)
        if args.queue_length > 0 and epoch >= args.epoch_queue_starts and queue is None:
            queue = torch.zeros(
                len(args.crops_for_assign),
                args.queue_length // args.world_size,
                args.feat_dim,
            ).cuda()
        scores, queue = train(train_loader, model, optimizer, epoch, queue)
        if args.rank == 0:
            save_dict = {"epoch": epoch + 1, "state_dict": model.state_dict(),
                         "optimizer": optimizer.state_dict()}
            if args.use_fp16:
                save_dict["amp"] = apex.amp.state_dict()
            torch.save(save_dict, os.path.join(args.dump_path, "checkpoint.pth.tar"))
        if queue is not None:
            torch.save({"queue": queue}, queue_path)


def train(train_loader, model, optimizer, epoch, queue):
    losses = AverageMeter()
    model.train()
    use_the_queue = False
    for it, inputs in enumerate(train_loader):
        # normalize the prototypes
        with torch.no_grad():
            w = model.module.prototypes.weight.data.clone()
            w = nn.functional.normalize(w, dim=1, p=2)
            model.module.prototypes.weight.copy_(w)

        embedding, output = model(inputs)
        embedding = embedding.detach()
        bs = inputs[0].size(0)

        loss = 0
        for i, crop_id in enumerate(args.crops_for_assign):
            with torch.no_grad():
                out = output[bs * crop_id: bs * (crop_id + 1)].detach()
                if queue is not None:
                    if use_the_queue or not torch.all(queue[i, -1, :] == 0):
                        use_the_queue = True
                        out = torch.cat((torch.mm(queue[i], model.module.prototypes.weight.t()), out))
                    queue[i, bs:] = queue[i, :-bs].clone()
                    queue[i, :bs] = embedding[crop_id * bs: (crop_id + 1) * bs]
                q = distributed_sinkhorn(out)[-bs:]
            subloss = 0
            for v in np.delete(np.arange(np.sum(args.nmb_crops)), crop_id):
                x = output[bs * v: bs * (v + 1)] / args.temperature
                subloss -= torch.mean(torch.sum(q * F.log_softmax(x, dim=1), dim=1))
            loss += subloss / (np.sum(args.nmb_crops) - 1)
        loss /= len(args.crops_for_assign)

        optimizer.zero_grad()
        if args.use_fp16:
            with apex.amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        losses.update(loss.item(), inputs[0].size(0))
    return (epoch, losses.avg), queue


@torch.no_grad()
def distributed_sinkhorn(out):
    Q = torch.exp(out / args.epsilon).t()  # Q is K-by-B for consistency with notations from our paper
    B = Q.shape[1] * args.world_size  # number of samples to assign
    K = Q.shape[0]  # how many prototypes

    sum_Q = torch.sum(Q)
    dist.all_reduce(sum_Q)
    Q /= sum_Q

    for it in range(args.sinkhorn_iterations):
        sum_of_rows = torch.sum(Q, dim=1, keepdim=True)
        dist.all_reduce(sum_of_rows)
        Q /= sum_of_rows
        Q /= K
        Q /= torch.sum(Q, dim=0, keepdim=True)
        Q /= B

    Q *= B  # the colomns must sum to 1 so that Q is an assignment
    return Q.t()


if __name__ == "__main__":
    main()
