'''
@File       :   train.py
@Time       :   2023/02/04 10:51:00
@Auther     :   Jiazheng Xu
@Contact    :   xjz22@mails.tsinghua.edu.cn
@Description:   Train reward model.
'''

import os
import sys
import json
import time
import math

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
import torch.optim as optim
from torch.backends import cudnn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from config.options import *
from config.utils import *
from config.learning_rates import get_learning_rate_scheduler
from rank_pair_dataset import rank_pair_dataset
from rank_dataset import rank_dataset
from ImageReward import ImageReward

os.environ["TOKENIZERS_PARALLELISM"] = "true"


def std_log():
    if get_rank() == 0:
        save_path = make_path()
        makedir(config['log_base'])
        sys.stdout = open(os.path.join(config['log_base'], "{}.txt".format(save_path)), "w")


def init_seeds(seed, cuda_deterministic=True):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    np.random.seed(seed)
    # Speed-reproducibility tradeoff https://pytorch.org/docs/stable/notes/randomness.html
    if cuda_deterministic:  # slower, more reproducible
        cudnn.deterministic = True
        cudnn.benchmark = False
    else:  # faster, less reproducible
        cudnn.deterministic = False
        cudnn.benchmark = True


def loss_func(reward):
    target = torch.zeros(reward.shape[0], dtype=torch.long).to(reward.device)
    loss_list = F.cross_entropy(reward, target, reduction='none')
    loss = torch.mean(loss_list)

    reward_diff = reward[:, 0] - reward[:, 1]
    acc = torch.mean((reward_diff > 0).clone().detach().float())

    return loss, loss_list, acc


def reduce_mean(tensor, nprocs):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= nprocs
    return rt


def collate_fn(batch):
    return batch


def build_optimizer(model):
    if opts.fix_base:
        params = [p for n, p in model.named_parameters() if 'mlp' in n]
    else:
        params = model.parameters()
    optimizer = optim.Adam(params, lr=config['train']['lr'], betas=(config['train']['adam_beta1'], config['train']['adam_beta2']),
                           eps=config['train']['adam_eps'])
    return optimizer


def evaluate(model, valid_loader, device):
    valid_loss = []
    valid_acc_list = []
    model.eval()
    with torch.no_grad():
        for step, batch_data_package in enumerate(valid_loader):
            reward = model(batch_data_package)
            loss, loss_list, acc = loss_func(reward)
            if opts.distributed:
                loss_list = [torch.zeros_like(loss_list) for _ in range(dist.get_world_size())]
                acc_all = reduce_mean(acc, dist.get_world_size())
            else:
                acc_all = acc
            valid_loss.append(loss.item())
            valid_acc_list.append(acc_all.item())
    model.train()
    return float(np.mean(valid_loss)), float(np.mean(valid_acc_list))


if __name__ == "__main__":

    if opts.std_log:
        std_log()

    if opts.distributed:
        torch.distributed.init_process_group(backend="nccl")
        local_rank = torch.distributed.get_rank()
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        init_seeds(opts.seed + local_rank)

    else:
        device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
        init_seeds(opts.seed)

    writer = visualizer()

    model = ImageReward(device).to(device)

    if opts.preload_path:
        model = preload_model(model)

    optimizer = build_optimizer(model)
    scheduler = get_learning_rate_scheduler(optimizer, opts)

    if opts.distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank,
                                                          find_unused_parameters=True)

    train_dataset = rank_pair_dataset("train") if opts.rank_pair else rank_dataset("train")
    valid_dataset = rank_pair_dataset("valid") if opts.rank_pair else rank_dataset("valid")
    test_dataset = rank_pair_dataset("test") if opts.rank_pair else rank_dataset("test")

    if opts.distributed:
        train_sampler = DistributedSampler(train_dataset)
        train_loader = DataLoader(train_dataset, batch_size=opts.BatchSize, sampler=train_sampler,
                                  collate_fn=collate_fn if not opts.rank_pair else None,
                                  num_workers=opts.num_workers, pin_memory=True)
    else:
        train_loader = DataLoader(train_dataset, batch_size=opts.BatchSize, shuffle=True,
                                  collate_fn=collate_fn if not opts.rank_pair else None)
    valid_loader = DataLoader(valid_dataset, batch_size=opts.batch_size, shuffle=True,
                              collate_fn=collate_fn if not opts.rank_pair else None)
    test_loader = DataLoader(test_dataset, batch_size=opts.batch_size, shuffle=True,
                             collate_fn=collate_fn if not opts.rank_pair else None)

    # Set the training iterations.
    opts.train_iters = opts.epochs * len(train_loader)
    steps_per_valid = len(train_loader) // opts.valid_per_epoch
    print("len(train_dataset) = ", len(train_dataset))
    print("train_dataset.iters_per_epoch = ", train_dataset.iters_per_epoch)
    print("len(train_loader) = ", len(train_loader))
    print("steps_per_valid = ", steps_per_valid)

    # valid result print and log
    if get_rank() == 0:
        valid_loss, valid_acc = evaluate(model, valid_loader, device)
        print('Validation - Iteration %d | Loss %6.5f | Acc %6.4f' % (0, valid_loss, valid_acc))
        writer.add_scalar('Validation-Loss', valid_loss, global_step=0)
        writer.add_scalar('Validation-Acc', valid_acc, global_step=0)

    best_acc = 0
    optimizer.zero_grad()
    losses = []
    acc_list = []
    for epoch in range(opts.epochs):

        if opts.distributed:
            train_sampler.set_epoch(epoch)

        for step, batch_data_package in enumerate(train_loader):
            model.train()
            reward = model(batch_data_package)
            loss, loss_list, acc = loss_func(reward)
            # loss regularization
            loss = loss / opts.accumulation_steps
            # back propagation
            loss.backward()

            losses.append(loss)
            acc_list.append(acc)

            iterations = epoch * len(train_loader) + step + 1
            train_iteration = iterations / opts.accumulation_steps

            # update parameters of net
            if (iterations % opts.accumulation_steps) == 0:
                # optimizer the net
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()

                # train result print and log
                if get_rank() == 0:
                    losses_log = torch.tensor(losses)
                    acc_log = torch.tensor(acc_list)
                    print('Iteration %d | Loss %6.5f | Acc %6.4f | mem %.1fG' % (
                        train_iteration, torch.mean(losses_log), torch.mean(acc_log),
                        torch.cuda.max_memory_allocated() / 1024 ** 3))
                    writer.add_scalar('Train-Loss', torch.mean(losses_log), global_step=train_iteration)
                    writer.add_scalar('Train-Acc', torch.mean(acc_log), global_step=train_iteration)

                losses.clear()
                acc_list.clear()

            # valid result print and log
            if (iterations % steps_per_valid) == 0:
                if get_rank() == 0:
                    valid_loss, valid_acc = evaluate(model, valid_loader, device)
                    print('Validation - Iteration %d | Loss %6.5f | Acc %6.4f' % (train_iteration, valid_loss, valid_acc))
                    writer.add_scalar('Validation-Loss', valid_loss, global_step=train_iteration)
                    writer.add_scalar('Validation-Acc', valid_acc, global_step=train_iteration)

                    if valid_acc > best_acc:
                        print("Best Val loss so far. Saving model")
                        best_acc = valid_acc
                        print("best_acc = ", best_acc)
                        save_model(model)

    # test model
    if get_rank() == 0:
        print("training done")
        print("test: ")
        model = load_model(model)
        model.eval()

        test_loss, test_acc = evaluate(model, test_loader, device)
        print('Test Loss %6.5f | Acc %6.4f' % (test_loss, test_acc))
