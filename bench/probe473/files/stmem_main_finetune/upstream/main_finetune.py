# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.

# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
# --------------------------------------------------------
# References:
# MAE: https://github.com/facebookresearch/mae
# DeiT: https://github.com/facebookresearch/deit
# BEiT: https://github.com/microsoft/unilm/tree/master/beit
# --------------------------------------------------------
# Fine-tuning / linear probing of ST-MEM encoders on PTB-XL, CPSC2018 and
# PhysioNet 2021 arrhythmia labels.
# --------------------------------------------------------

import argparse
import datetime
import json
import os
import time

import numpy as np
import pandas as pd
import torch
import torch.backends.cudnn as cudnn
import yaml
from torch.utils.tensorboard import SummaryWriter

import models
import util.misc as misc
import util.lr_decay as lrd
from engine_downstream import evaluate, train_one_epoch
from util.dataset import build_dataset, get_dataloader
from util.losses import build_loss_fn
from util.metric import build_metric_fn, is_best_metric
from util.misc import NativeScalerWithGradNormCount as NativeScaler


def parse() -> dict:
    parser = argparse.ArgumentParser('ECG downstream training')

    parser.add_argument('--config_path',
                        default='./configs/downstream/st_mem.yaml',
                        type=str,
                        metavar='FILE',
                        help='YAML config file path')
    parser.add_argument('--output_dir',
                        default="",
                        type=str,
                        metavar='DIR',
                        help='path where to save')
    parser.add_argument('--exp_name',
                        default="",
                        type=str,
                        help='experiment name')
    parser.add_argument('--resume',
                        default="",
                        type=str,
                        metavar='PATH',
                        help='resume from checkpoint')
    parser.add_argument('--start_epoch',
                        default=0,
                        type=int,
                        metavar='N',
                        help='start epoch')
    parser.add_argument('--encoder_path',
                        default="",
                        type=str,
                        metavar='PATH',
                        help='pretrained encoder checkpoint')
    parser.add_argument('--eval', action='store_true',
                        help='only evaluate the checkpoint given by --resume')

    args = parser.parse_args()
    with open(os.path.realpath(args.config_path), 'r') as f:
        config = yaml.load(f, Loader=yaml.FullLoader)
    for k, v in vars(args).items():
        if v:
            config[k] = v

    return config


def main(config):
    misc.init_distributed_mode(config['ddp'])

    print(f'job dir: {os.path.dirname(os.path.realpath(__file__))}')
    print(yaml.dump(config, default_flow_style=False, sort_keys=False))

    device = torch.device(config['device'])

    # fix the seed for reproducibility
    seed = config['seed'] + misc.get_rank()
    torch.manual_seed(seed)
    np.random.seed(seed)

    cudnn.benchmark = True

    # ECG dataset
    dataset_train = build_dataset(config['dataset'], split='train')
    dataset_valid = build_dataset(config['dataset'], split='valid')

    data_loader_train = get_dataloader(dataset_train,
                                       is_distributed=config['ddp']['distributed'],
                                       mode='train',
                                       **config['dataloader'])
    data_loader_valid = get_dataloader(dataset_valid,
                                       is_distributed=config['ddp']['distributed'],
                                       dist_eval=config['train']['dist_eval'],
                                       mode='eval',
                                       **config['dataloader'])

    if misc.is_main_process() and config['output_dir']:
        output_dir = os.path.join(config['output_dir'], config['exp_name'])
        os.makedirs(output_dir, exist_ok=True)
        log_writer = SummaryWriter(log_dir=output_dir)
    else:
        output_dir = None
        log_writer = None

    model_name = config['model_name']
    if model_name in models.__dict__:
        model = models.__dict__[model_name](**config['model'])
    else:
        raise ValueError(f'Unsupported model name: {model_name}')

    if config['mode'] != "scratch":
        checkpoint = torch.load(config['encoder_path'], map_location='cpu')
        print(f"Load pre-trained checkpoint from: {config['encoder_path']}")
        checkpoint_model = checkpoint['model']
        msg = model.load_state_dict(checkpoint_model, strict=False)
        print(msg)
        assert set(msg.missing_keys) == {'head.weight', 'head.bias'}
        if config['mode'] == "linprobe":
            for _, p in model.named_parameters():
                p.requires_grad = False
            for _, p in model.head.named_parameters():
                p.requires_grad = True

    model.to(device)

    model_without_ddp = model
    n_parameters = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"Model = {str(model_without_ddp)}")
    print(f"number of params (M): {n_parameters / 1.e6:.2f}")

    eff_batch_size = config['dataloader']['batch_size'] * config['train']['accum_iter'] * misc.get_world_size()
    if config['train']['lr'] is None:
        config['train']['lr'] = config['train']['blr'] * eff_batch_size / 256

    print(f"base lr: {config['train']['lr'] * 256 / eff_batch_size}")
    print(f"actual lr: {config['train']['lr']}")
    print(f"accumulate grad iterations: {config['train']['accum_iter']}")
    print(f"effective batch size: {eff_batch_size}")

    if config['ddp']['distributed']:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[config['ddp']['gpu']])
        model_without_ddp = model.module

    # build optimizer with layer-wise lr decay (lrd)
    param_groups = lrd.param_groups_lrd(model_without_ddp,
                                        config['train']['weight_decay'],
                                        no_weight_decay_list=model_without_ddp.no_weight_decay(),
                                        layer_decay=config['train']['layer_decay'])
    optimizer = torch.optim.AdamW(param_groups, lr=config['train']['lr'])
    loss_scaler = NativeScaler()

    criterion = build_loss_fn(config['loss'])
    metric_fn, best_metric = build_metric_fn(config['metric'])
    metric_fn.to(device)

    misc.load_model(config, model_without_ddp, optimizer, loss_scaler)

    if config.get('eval', False):
        test_stats, metrics = evaluate(model, criterion, data_loader_valid, device, metric_fn,
                                       output_act=config['output_act'])
        print(json.dumps(metrics, indent=2))
        return

    print(f"Start training for {config['train']['epochs']} epochs")
    start_time = time.time()
    for epoch in range(config['start_epoch'], config['train']['epochs']):
        if config['ddp']['distributed']:
            data_loader_train.sampler.set_epoch(epoch)
        train_stats = train_one_epoch(model,
                                      criterion,
                                      data_loader_train,
                                      optimizer,
                                      device,
                                      epoch,
                                      loss_scaler,
                                      log_writer,
                                      config['train'])

        valid_stats, metrics = evaluate(model, criterion, data_loader_valid, device, metric_fn,
                                        output_act=config['output_act'])
        curr_metric = metrics[config['metric']['target_metric']]
        print(f"{config['metric']['target_metric']} on the validation set: {curr_metric:.4f}")
        if is_best_metric(best_metric, curr_metric, config['metric']['target_metric']):
            best_metric = curr_metric
            if output_dir:
                misc.save_model(config,
                                os.path.join(output_dir, 'best-model.pth'),
                                epoch,
                                model_without_ddp,
                                optimizer,
                                loss_scaler,
                                metrics)
        print(f"Best {config['metric']['target_metric']}: {best_metric:.4f}")

        if log_writer is not None:
            for k, v in metrics.items():
                log_writer.add_scalar(f'perf/{k}', v, epoch)

        log_stats = {**{f'train_{k}': v for k, v in train_stats.items()},
                     **{f'valid_{k}': v for k, v in valid_stats.items()},
                     **{f'valid_{k}': v for k, v in metrics.items()},
                     'epoch': epoch,
                     'n_parameters': n_parameters}

        if output_dir and misc.is_main_process():
            if log_writer is not None:
                log_writer.flush()
            with open(os.path.join(output_dir, "log.txt"), mode="a", encoding="utf-8") as f:
                f.write(json.dumps(log_stats) + "\n")

    total_time = time.time() - start_time
    total_time_str = str(datetime.timedelta(seconds=int(total_time)))
    print(f'Training time {total_time_str}')

    if output_dir and 'test' in config['dataset']:
        # evaluate the best checkpoint on the held-out test fold (PTB-XL fold 10)
        checkpoint = torch.load(os.path.join(output_dir, 'best-model.pth'), map_location='cpu')
        model_without_ddp.load_state_dict(checkpoint['model'])
        dataset_test = build_dataset(config['dataset'], split='test')
        data_loader_test = get_dataloader(dataset_test,
                                          is_distributed=config['ddp']['distributed'],
                                          dist_eval=config['train']['dist_eval'],
                                          mode='eval',
                                          **config['dataloader'])
        test_stats, metrics = evaluate(model, criterion, data_loader_test, device, metric_fn,
                                       output_act=config['output_act'])
        metrics['epoch'] = checkpoint['epoch']
        if misc.is_main_process():
            pd.DataFrame([metrics]).to_csv(os.path.join(output_dir, 'test_metrics.csv'), index=False)


if __name__ == '__main__':
    config = parse()
    main(config)
