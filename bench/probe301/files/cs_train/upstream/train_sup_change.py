"""Supervised (bitemporal) change detection training for ChangeStar.

Launch with torch.distributed.launch, one process per GPU:

    python -m torch.distributed.launch --nproc_per_node=4 --master_port 9996 \
        train_sup_change.py --config_path=levircd.r50_farseg_changestar_bisup --model_dir=./log/...
"""
import argparse
import os
import random

import numpy as np
import torch
import torch.distributed as dist

from core.config import import_config, merge_opts
from core.trainer import Launcher
from core.logger import get_logger
from data.levircd import LEVIRCDLoader
from module.changestar import ChangeStar

parser = argparse.ArgumentParser()
parser.add_argument('--local_rank', type=int, default=0)
parser.add_argument('--config_path', type=str, help='dotted path under configs/')
parser.add_argument('--model_dir', type=str, help='where checkpoints and logs go')
parser.add_argument('--trainer', type=str, default='apex_ddp', choices=['apex_ddp', 'th_amp_ddp', 'th_ddp'],
                    help='apex_ddp: NVIDIA apex O1 + DDP, th_amp_ddp: torch.cuda.amp + DDP')
parser.add_argument('--opt_level', type=str, default='O1')
parser.add_argument('--seed', type=int, default=2333)
parser.add_argument('--profile', action='store_true', help='profile 20 training steps and exit')
parser.add_argument('opts', help=None, default=None, nargs=argparse.REMAINDER)


def seed_everything(seed, rank):
    seed = seed + rank
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def setup_distributed(local_rank):
    torch.cuda.set_device(local_rank)
    if 'WORLD_SIZE' in os.environ and int(os.environ['WORLD_SIZE']) > 1:
        dist.init_process_group(backend="nccl", init_method="env://")
        dist.barrier()
        return True
    return False


def build_dataloaders(cfg, distributed):
    train_loader = LEVIRCDLoader(cfg['data']['train']['params'], distributed=distributed)
    test_loader = LEVIRCDLoader(cfg['data']['test']['params'], distributed=False)
    return train_loader, test_loader


def main():
    args = parser.parse_args()
    if 'LOCAL_RANK' in os.environ:
        args.local_rank = int(os.environ['LOCAL_RANK'])
    distributed = setup_distributed(args.local_rank)
    rank = dist.get_rank() if distributed else 0

    cfg = import_config(args.config_path)
    cfg = merge_opts(cfg, args.opts)
    os.makedirs(args.model_dir, exist_ok=True)

    logger = get_logger('changestar', os.path.join(args.model_dir, 'train.log'), rank=rank)
    logger.info('world size: %d, local rank: %d, visible GPUs: %d', dist.get_world_size() if distributed else 1,
                args.local_rank, torch.cuda.device_count())
    logger.info('GPU: %s', torch.cuda.get_device_name(args.local_rank))

    seed_everything(args.seed, rank)
    torch.backends.cudnn.benchmark = True

    model = ChangeStar(cfg['model']['params'])
    train_loader, test_loader = build_dataloaders(cfg, distributed)

    launcher = Launcher(model_dir=args.model_dir,
                        model=model,
                        train_config=cfg['train'],
                        optimizer_config=cfg['optimizer'],
                        learning_rate_config=cfg['learning_rate'],
                        trainer=args.trainer,
                        opt_level=args.opt_level,
                        distributed=distributed,
                        logger=logger)
    if args.profile:
        launcher.profile(train_loader)
    else:
        launcher.train_by_config(train_loader, test_data_loader=test_loader)

    if distributed:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
