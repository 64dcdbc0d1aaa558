import argparse
import collections
import os
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

import datasets.data_loaders as module_data
from base.parse_config import ConfigParser
from models.mvsformer_model import TwinMVSNet, DINOMVSNet
from trainer.mvsformer_trainer import Trainer
from utils import get_lr_schedule_with_warmup, get_parameter_groups, init_model, torch_distributed_zero_first

SEED = 123
torch.manual_seed(SEED)
torch.cuda.manual_seed(SEED)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
np.random.seed(SEED)
random.seed(SEED)


def main(gpu, args, config):
    rank = args.node_rank * args.gpus + gpu
    torch.cuda.set_device(gpu)
    if args.DDP:
        dist.init_process_group(backend='nccl', init_method='env://', world_size=args.world_size, rank=rank)
        config['n_gpu'] = args.world_size
    else:
        config['n_gpu'] = 1

    # bf16 autocast needs Ampere (sm80) or newer; older cards fall back to fp16 + loss scaling
    if config.config.get('bf16', False):
        major, minor = torch.cuda.get_device_capability(gpu)
        if major < 8:
            if rank == 0:
                print("sm{}{} has no bf16 support, using fp16 autocast instead".format(major, minor))
            config.config['bf16'] = False

    # build dataloaders: one loader per resolution bucket when multi-scale training is on
    train_data_loaders = []
    valid_data_loaders = []
    train_sampler = None
    data_loader_args = config["data_loader"][0]["args"]
    mvs_dataset = getattr(module_data, config["data_loader"][0]["type"])
    with torch_distributed_zero_first(rank, args.DDP):
        train_dataset = mvs_dataset(**data_loader_args, mode="train")
        valid_dataset = mvs_dataset(**{**data_loader_args, "batch_size": 1}, mode="val")

    if args.DDP:
        train_sampler = DistributedSampler(train_dataset, num_replicas=args.world_size, rank=rank, shuffle=True)
        valid_sampler = DistributedSampler(valid_dataset, num_replicas=args.world_size, rank=rank, shuffle=False)
    else:
        valid_sampler = None

    train_data_loaders.append(DataLoader(train_dataset, batch_size=data_loader_args["batch_size"],
                                         shuffle=(train_sampler is None), sampler=train_sampler,
                                         num_workers=data_loader_args["num_workers"], pin_memory=True,
                                         drop_last=True))
    valid_data_loaders.append(DataLoader(valid_dataset, batch_size=1, shuffle=False, sampler=valid_sampler,
                                         num_workers=data_loader_args["num_workers"], pin_memory=True,
                                         drop_last=False))

    # build models architecture, then print to console
    if config['arch']['args']['vit_args'].get('twin', False):
        model = TwinMVSNet(config['arch']['args'])
    else:
        model = DINOMVSNet(config['arch']['args'])

    # get function handles of loss and metrics
    if rank == 0:
        print('Number of model parameters: {}'.format(sum([p.data.nelement() for p in model.parameters()])))

    # build optimizer and learning rate scheduler. delete every lines containing lr_scheduler for disabling scheduler
    if config['arch']['finetune'] is True:
        model = init_model(model, config, rank)

    param_groups = get_parameter_groups(model, config['optimizer'])
    optimizer = torch.optim.AdamW(param_groups, lr=config['optimizer']['args']['lr'],
                                  weight_decay=config['optimizer']['args']['weight_decay'])

    model.to(gpu)

    if args.DDP:
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu], output_device=gpu,
                                                          find_unused_parameters=True)

    lr_scheduler = get_lr_schedule_with_warmup(optimizer, num_warmup_steps=config['lr_scheduler']['args']['warmup_steps'],
                                               min_lr=config['optimizer']['args']['min_lr'],
                                               total_steps=len(train_data_loaders[0]) * config['trainer']['epochs'])

    writer = None
    if rank == 0:
        from torch.utils.tensorboard import SummaryWriter
        writer = SummaryWriter(config.log_dir)

    trainer = Trainer(model, optimizer, config=config, data_loader=train_data_loaders, ddp=args.DDP,
                      valid_data_loader=valid_data_loaders, lr_scheduler=lr_scheduler, writer=writer, rank=rank,
                      train_sampler=train_sampler, debug=args.debug)
    trainer.train()

    if args.DDP:
        dist.destroy_process_group()


if __name__ == '__main__':
    args = argparse.ArgumentParser(description='MVSFormer training')
    args.add_argument('-c', '--config', default=None, type=str, help='config file path (default: None)')
    args.add_argument('-r', '--resume', default=None, type=str, help='path to latest checkpoint (default: None)')
    args.add_argument('-d', '--device', default=None, type=str, help='indices of GPUs to enable (default: all)')
    args.add_argument('--exp_name', default=None, type=str)
    args.add_argument('--dataloader_type', default=None, type=str)
    args.add_argument('--data_path', default=None, type=str)
    args.add_argument('--dataset_name', default=None, type=str)
    args.add_argument('--nodes', default=1, type=int, metavar='N')
    args.add_argument('--node_rank', default=0, type=int, help='ranking within the nodes')
    args.add_argument('--DDP', action='store_true', help='DDP')
    args.add_argument('--debug', action='store_true', help='slow down the training but can check the nan loss')
    args.add_argument('--finetune', action='store_true', help='finetune on blendedmvs')
    args.add_argument('--balanced_training', action='store_true', help='train with balanced DTU and BlendedMVS data')
    args.add_argument('--port', default=None, type=int, help='master port for DDP')

    # custom cli options to modify configuration from default values given in json file.
    CustomArgs = collections.namedtuple('CustomArgs', 'flags type target')
    options = [
        CustomArgs(['--lr', '--learning_rate'], type=float, target='optimizer;args;lr'),
        CustomArgs(['--bs', '--batch_size'], type=int, target='data_loader;args;batch_size'),
        CustomArgs(['--ep', '--epochs'], type=int, target='trainer;epochs'),
    ]
    config = ConfigParser.from_args(args, options)
    args = args.parse_args()

    if args.device:
        os.environ["CUDA_VISIBLE_DEVICES"] = args.device
    args.gpus = torch.cuda.device_count()
    print(f"Using {args.gpus} GPUs (DDP={args.DDP})")

    if args.DDP:
        args.world_size = args.gpus * args.nodes
        os.environ['MASTER_ADDR'] = 'localhost'
        os.environ['MASTER_PORT'] = str(args.port) if args.port is not None else str(random.randint(10000, 20000))
        mp.spawn(main, nprocs=args.gpus, args=(args, config))
    else:
        main(0, args, config)
