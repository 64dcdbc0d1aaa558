import os
import argparse
import importlib
import numpy as np
from tqdm import tqdm, trange
from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from lib.config import config, update_config, infer_exp_id
from lib import dataset


def train_loop(net, loader, optimizer, scaler):
    net.train()
    if config.training.fix_encoder_bn:
        apply_fn_based_on_key(net.encoder, ['bn'], lambda m: m.eval())
    epoch_losses = Counter()
    for iter_i, batch in tqdm(enumerate(loader), total=len(loader), position=1, leave=False, dynamic_ncols=True):
        for k, v in batch.items():
            if torch.is_tensor(v):
                batch[k] = v.to(device)

        with torch.cuda.amp.autocast(enabled=config.training.amp):
            losses = net.compute_losses(batch)
        for k, v in losses.items():
            if not torch.isfinite(v):
                raise Exception('%s is not finite (%s)' % (k, v.item()))
            epoch_losses[k] += v.item()

        optimizer.zero_grad()
        scaler.scale(losses['total']).backward()
        scaler.step(optimizer)
        scaler.update()
        if scheduler is not None:
            scheduler.step()

    return {k: v / len(loader) for k, v in epoch_losses.items()}


def valid_loop(net, loader):
    net.eval()
    epoch_losses = Counter()
    with torch.no_grad():
        for iter_i, batch in tqdm(enumerate(loader), total=len(loader), position=1, leave=False, dynamic_ncols=True):
            for k, v in batch.items():
                if torch.is_tensor(v):
                    batch[k] = v.to(device)
            losses = net.compute_losses(batch)
            for k, v in losses.items():
                epoch_losses[k] += float(v.item()) / len(loader.dataset)
    return epoch_losses


def apply_fn_based_on_key(net, key_lst, fn):
    for name, m in net.named_modules():
        if any(k in name for k in key_lst):
            fn(m)


def group_parameters(net, wd_group_mode):
    wd = []
    nowd = []
    for name, p in net.named_parameters():
        if not p.requires_grad:
            continue
        if wd_group_mode == 'bn and bias':
            if 'bn' in name or 'bias' in name:
                nowd.append(p)
            else:
                wd.append(p)
        elif wd_group_mode == 'encoder decoder':
            if 'feature_extractor' in name:
                nowd.append(p)
            else:
                wd.append(p)
    return [{'params': wd}, {'params': nowd, 'weight_decay': 0}]


if __name__ == '__main__':

    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument('--cfg', required=True)
    parser.add_argument('--pth', help='pretrained model to finetune from')
    parser.add_argument('opts',
                        help='Modify config options using the command-line',
                        default=None, nargs=argparse.REMAINDER)
    args = parser.parse_args()
    update_config(config, args)
    exp_id = infer_exp_id(args.cfg)
    exp_ckpt_root = os.path.join(config.ckpt_root, exp_id)
    os.makedirs(exp_ckpt_root, exist_ok=True)
    device = 'cuda' if config.cuda else 'cpu'

    if config.cuda and config.cuda_benchmark:
        torch.backends.cudnn.benchmark = True

    # Init global variable
    print('Experiment id: %s' % exp_id)
    print('Device: %s' % device)

    # Init dataset
    DatasetClass = getattr(dataset, config.dataset.name)
    config.dataset.train_kwargs.update(config.dataset.common_kwargs)
    config.dataset.valid_kwargs.update(config.dataset.common_kwargs)
    train_dataset = DatasetClass(**config.dataset.train_kwargs)
    valid_dataset = DatasetClass(**config.dataset.valid_kwargs)
    train_loader = DataLoader(train_dataset, config.training.batch_size,
                              shuffle=True, drop_last=True,
                              num_workers=config.num_workers,
                              pin_memory=config.cuda,
                              worker_init_fn=lambda x: np.random.seed())
    valid_loader = DataLoader(valid_dataset, 1,
                              num_workers=config.num_workers,
                              pin_memory=config.cuda)

    # Init network
    model_file = importlib.import_module(config.model.file)
    model_class = getattr(model_file, config.model.modelclass)
    net = model_class(**config.model.kwargs).to(device)
    if args.pth:
        state = torch.load(args.pth, map_location='cpu')
        net.load_state_dict(state, strict=False)

    # Init optimizer
    if config.training.optim == 'SGD':
        optimizer = torch.optim.SGD(
            group_parameters(net, config.training.wd_group_mode),
            lr=config.training.optim_lr, momentum=config.training.optim_betas[0],
            weight_decay=config.training.weight_decay)
    elif config.training.optim == 'Adam':
        optimizer = torch.optim.Adam(
            group_parameters(net, config.training.wd_group_mode),
            lr=config.training.optim_lr, betas=config.training.optim_betas,
            weight_decay=config.training.weight_decay)
    elif config.training.optim == 'AdamW':
        optimizer = torch.optim.AdamW(
            group_parameters(net, config.training.wd_group_mode),
            lr=config.training.optim_lr, betas=config.training.optim_betas,
            weight_decay=config.training.weight_decay)
    scaler = torch.cuda.amp.GradScaler(enabled=config.training.amp)

    if config.training.optim_poly_gamma > 0:
        def lr_poly_rate(epoch):
            return (1 - epoch / config.training.epoch) ** config.training.optim_poly_gamma
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lr_poly_rate)
        scheduler_per_iter = False
    else:
        scheduler = torch.optim.lr_scheduler.MultiStepLR(
            optimizer, gamma=config.training.optim_gamma,
            milestones=[int(p * config.training.epoch) for p in config.training.optim_milestons])
        scheduler_per_iter = False
    if not scheduler_per_iter:
        epoch_scheduler, scheduler = scheduler, None

    # Start training
    for iep in trange(1, config.training.epoch + 1, position=0):

        # Train phase
        epoch_losses = train_loop(net, train_loader, optimizer, scaler)
        epoch_scheduler.step()
        print('EP[%d/%d] train:  ' % (iep, config.training.epoch) +
              ' \t '.join(['%s %.3f' % (k, v) for k, v in epoch_losses.items()]))

        # Periodically save model
        if iep % config.training.save_every == 0:
            torch.save(net.state_dict(), os.path.join(exp_ckpt_root, 'ep%d.pth' % iep))
            print('Model saved')

        # Valid phase
        if iep == config.training.epoch or iep % 10 == 0:
            epoch_losses = valid_loop(net, valid_loader)
            print('EP[%d/%d] valid:  ' % (iep, config.training.epoch) +
                  ' \t '.join(['%s %.3f' % (k, v) for k, v in epoch_losses.items()]))
