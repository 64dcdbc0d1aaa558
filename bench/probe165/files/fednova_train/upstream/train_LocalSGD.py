"""Local SGD / FedNova / FedProx training on CIFAR-10 with torch.distributed.

One process per client; every process owns one GPU of a node. Example (16 clients
over 4 nodes with 4 GPUs each, node h0 is the rendezvous point):

    python train_LocalSGD.py --pattern constant --lr 0.02 --bs 32 --localE 2 \
        --alpha 0.1 --model VGG --optimizer fednova --mu 0 --momentum 0.9 \
        --size 16 --rank $RANK --backend nccl --initmethod tcp://h0:22000 \
        --rounds 100 --seed 1 --NIID --print_freq 50 --gpus 4
"""
import argparse
import datetime
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.utils.data.distributed
from torch.multiprocessing import Process

import util_v4 as util
from comm_helpers import SyncAllreduce
from distoptim import FedNova, FedProx, LocalSGD
from models import *  # noqa: F401,F403

parser = argparse.ArgumentParser(description="CIFAR-10 baseline")
parser.add_argument("--name", "-n", default="default", type=str, help="experiment name, used for saving results")
parser.add_argument("--backend", default="nccl", type=str, help="distributed backend")
parser.add_argument("--dataset", default="cifar10", type=str, help="dataset name")
parser.add_argument("--model", default="res", type=str, help="neural network model")
parser.add_argument("--alpha", default=0.2, type=float, help="control the non-iidness of dataset")
parser.add_argument("--gmf", default=0, type=float, help="global (server) momentum factor")
parser.add_argument("--lr", default=0.1, type=float, help="client learning rate")
parser.add_argument("--momentum", default=0.0, type=float, help="local (client) momentum factor")
parser.add_argument("--bs", default=512, type=int, help="batch size on each worker/client")
parser.add_argument("--rounds", default=200, type=int, help="total coommunication rounds")
parser.add_argument("--localE", default=98, type=int, help="number of local epochs")
parser.add_argument("--print_freq", default=100, type=int, help="print info frequency")
parser.add_argument("--size", default=8, type=int, help="number of local workers")
parser.add_argument("--rank", default=0, type=int, help="the rank of worker")
parser.add_argument("--seed", default=1, type=int, help="random seed")
parser.add_argument("--save", "-s", action="store_true", help="whether save the training results")
parser.add_argument("--p", "-p", action="store_true", help="whether the dataset is partitioned or not")
parser.add_argument("--NIID", action="store_true", help="whether the dataset is non-iid or not")
parser.add_argument("--pattern", type=str, help="pattern of local steps")
parser.add_argument("--optimizer", default="local", type=str, help="optimizer name")
parser.add_argument("--initmethod", default="tcp://h0:22000", type=str, help="init method")
parser.add_argument("--mu", default=0, type=float, help="mu parameter in fedprox")
parser.add_argument("--savepath", default="./results/", type=str, help="directory to save exp results")
parser.add_argument("--datapath", default="./data/", type=str, help="directory to load data")
parser.add_argument("--gpus", default=4, type=int, help="number of GPUs per node")
parser.add_argument("--ifname", default="", type=str, help="network interface used by NCCL, e.g. ib0")
parser.add_argument("--profile", action="store_true", help="emit NVTX ranges for nsys")

args = parser.parse_args()


def run(rank, size):
    # initiate experiments folder
    save_path = args.savepath
    folder_name = save_path + args.name
    if rank == 0 and os.path.isdir(folder_name) == False and args.save:
        os.mkdir(folder_name)
    dist.barrier()

    # initiate log files
    tag = "{}/lr{:.3f}_bs{:d}_cr{:d}_avgcr{:.3f}_e{}_r{}_n{}.csv"
    saveFileName = tag.format(folder_name, args.lr, args.bs, args.cr, args.rounds, args.seed, rank, size) \
        if hasattr(args, "cr") else "{}/r{}_n{}.csv".format(folder_name, rank, size)
    args.out_fname = saveFileName
    with open(args.out_fname, "w+") as f:
        print("BEGIN-TRAINING\n" "World-Size,{ws}\n" "Batch-Size,{bs}\n" "Epoch,itr,BT(s),avg:BT(s),std:BT(s),"
              "CT(s),avg:CT(s),std:CT(s),Loss,avg:Loss,Prec@1,avg:Prec@1,val".format(ws=args.size, bs=args.bs),
              file=f)

    # seed for reproducibility
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)
    np.random.seed(args.seed)
    random.seed(args.seed)
    torch.backends.cudnn.deterministic = True

    # load datasets
    train_loader, test_loader, DataRatios = \
        util.partition_dataset(rank, size, args)
    print("Rank: {} | data ratio {}".format(rank, DataRatios[rank]))

    # define neural nets model, criterion, and optimizer
    model = util.select_model(10, args).cuda()
    criterion = nn.CrossEntropyLoss().cuda()

    # select optimizer according to algorithm
    algorithms = {
        "fedavg": LocalSGD,  # FedAvg
        "fedprox": FedProx,  # FedProx
        "fednova": FedNova,  # FedNova
    }
    selected_opt = algorithms[args.optimizer]
    optimizer = selected_opt(model.parameters(),
                             lr=args.lr,
                             gmf=args.gmf,
                             mu=args.mu,
                             ratio=DataRatios[rank],
                             momentum=args.momentum,
                             nesterov=False,
                             weight_decay=1e-4)

    best_test_accuracy = 0
    for rnd in range(args.rounds):
        # Decide number of local updates per client
        local_epochs = update_local_epochs(args.pattern, rank, rnd)
        tau_i = local_epochs * len(train_loader)
        print("Round {} | Rank {} | local epochs {} | tau {}".format(rnd, rank, local_epochs, tau_i))

        # Decay learning rate according to round index
        update_learning_rate(optimizer, rnd, args.lr)
        # Clients locally train for several local epochs
        for t in range(local_epochs):
            train(model, criterion, optimizer, train_loader, t)

        # synchronize parameters
        dist.barrier()
        comm_start = time.time()
        optimizer.average()
        dist.barrier()
        comm_end = time.time()
        comm_time = comm_end - comm_start

        # evaluate test accuracy
        test_acc = evaluate(model, test_loader)
        if test_acc > best_test_accuracy:
            best_test_accuracy = test_acc

        # record metrics
        print("Round {} | Rank {} | test accuracy {:.4f} | comm {:.3f}s".format(rnd, rank, test_acc, comm_time))
        with open(args.out_fname, "+a") as f:
            print("{ep},{itr},{filler},{filler},{filler},{filler},{filler},{filler},{filler},{filler},{filler},"
                  "{filler},{val:.4f}"
                  .format(ep=rnd, itr=-1, filler=-1, val=test_acc), file=f)


def evaluate(model, test_loader):
    model.eval()
    top1 = util.AverageMeter()

    with torch.no_grad():
        for batch_idx, (data, target) in enumerate(test_loader):
            data, target = data.cuda(non_blocking=True), target.cuda(non_blocking=True)
            outputs = model(data)
            acc1 = util.comp_accuracy(outputs, target)
            top1.update(acc1[0].item(), data.size(0))

    return top1.avg


def train(model, criterion, optimizer, loader, epoch):
    model.train()

    losses = util.Meter(ptag="Loss")
    top1 = util.Meter(ptag="Prec@1")

    for batch_idx, (data, target) in enumerate(loader):
        if args.profile:
            torch.cuda.nvtx.range_push("step_%d" % batch_idx)
        # data loading
        data = data.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)

        # forward pass
        output = model(data)
        loss = criterion(output, target)

        # backward pass
        loss.backward()

        # gradient step
        optimizer.step()
        optimizer.zero_grad()

        # write log files
        train_acc = util.comp_accuracy(output, target)

        losses.update(loss.item(), data.size(0))
        top1.update(train_acc[0].item(), data.size(0))

        if batch_idx % args.print_freq == 0 and args.save:
            print("epoch {} itr {}, rank {}, loss value {:.4f}, train accuracy {:.3f}".format(
                epoch, batch_idx, dist.get_rank(), losses.avg, top1.avg))

            with open(args.out_fname, "+a") as f:
                print("{ep},{itr},{loss.val:.4f},{loss.avg:.4f},{filler},"
                      "{top1.val:.3f},{top1.avg:.3f},-1"
                      .format(ep=epoch, itr=batch_idx, filler=-1, loss=losses, top1=top1), file=f)
        if args.profile:
            torch.cuda.nvtx.range_pop()

    with open(args.out_fname, "+a") as f:
        print("{ep},{itr},{loss.val:.4f},{loss.avg:.4f},{filler},"
              "{top1.val:.3f},{top1.avg:.3f},-1"
              .format(ep=epoch, itr=batch_idx, filler=-1, loss=losses, top1=top1), file=f)


def update_local_epochs(pattern, rank, rnd):
    if pattern == "constant":
        return args.localE

    if pattern == "uniform_random":
        np.random.seed(2020 + rank + rnd + args.seed)
        return np.random.randint(low=2, high=args.localE, size=1)[0]


def update_learning_rate(optimizer, epoch, target_lr):
    """
    1) Decay learning rate exponentially (epochs 30, 60, 80)
    ** note: target_lr is the reference learning rate from which to scale down
    """
    if epoch == int(args.rounds / 2):
        lr = target_lr / 10
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr

    if epoch == int(args.rounds * 0.75):
        lr = target_lr / 100
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr


def init_processes(rank, size, fn):
    """ Initialize the distributed environment. """
    if args.ifname:
        os.environ["NCCL_SOCKET_IFNAME"] = args.ifname
    dist.init_process_group(backend=args.backend,
                            init_method=args.initmethod,
                            rank=rank,
                            world_size=size,
                            timeout=datetime.timedelta(minutes=30))
    # with NCCL every rank talks through its own GPU; gloo keeps everything on the CPU
    if dist.get_backend() == "nccl":
        torch.cuda.set_device(rank % args.gpus)
    fn(rank, size)


if __name__ == "__main__":
    rank = args.rank
    size = args.size
    print(rank)
    init_processes(rank, size, run)
