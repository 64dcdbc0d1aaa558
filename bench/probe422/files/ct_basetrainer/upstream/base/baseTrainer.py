#!/usr/bin/env python
import os
from collections import OrderedDict

import torch
import torch.distributed as dist


def step_learning_rate(base_lr, epoch, step_epoch, multiplier=0.1):
    lr = base_lr * (multiplier ** (epoch // step_epoch))
    return lr


def poly_learning_rate(base_lr, curr_iter, max_iter, power=0.9):
    """poly learning rate policy"""
    lr = base_lr * (1 - float(curr_iter) / max_iter) ** power
    return lr


def adjust_learning_rate(optimizer, lr):
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr


def save_checkpoint(model, other_state={}, sav_path='', filename='model.pth.tar', stage=1):
    if isinstance(model, torch.nn.parallel.DistributedDataParallel):
        model = model.module
    state = {'state_dict': model.state_dict()}
    state.update(other_state)
    if not os.path.exists(sav_path):
        os.makedirs(sav_path)
    torch.save(state, os.path.join(sav_path, filename))


def load_state_dict(model, state_dict, strict=True):
    if list(state_dict.keys())[0].startswith('module.'):
        new_state_dict = OrderedDict()
        for k, v in state_dict.items():
            new_state_dict[k[7:]] = v
        state_dict = new_state_dict
    if isinstance(model, torch.nn.parallel.DistributedDataParallel):
        model = model.module
    missing, unexpected = model.load_state_dict(state_dict, strict=strict)
    if len(missing) > 0:
        print("missing keys: {}".format(missing))
    if len(unexpected) > 0:
        print("unexpected keys: {}".format(unexpected))
    return model


def reduce_tensor(tensor, args):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= args.world_size
    return rt


def all_gather_scalar(value, args):
    """Gathers a python float from every rank (NCCL requires the tensor to live on the GPU)."""
    t = torch.tensor([value], dtype=torch.float32).cuda(args.gpu)
    out = [torch.zeros_like(t) for _ in range(args.world_size)]
    dist.all_gather(out, t)
    return [x.item() for x in out]
