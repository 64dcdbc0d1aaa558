"""
Training entry point for Diffusion Planner on nuPlan (joint prediction + planning with a DiT decoder).

torchrun --nproc_per_node=8 train_predictor.py --train_set /data/nuplan/cache --train_set_list train_list.json
"""
import os
import json
import time
import random
import argparse
from datetime import datetime

import numpy as np
import torch
import torch.distributed as dist
from torch import optim
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from timm.utils import ModelEma

from diffusion_planner.model.diffusion_planner import Diffusion_Planner
from diffusion_planner.utils.normalizer import ObservationNormalizer, StateNormalizer
from diffusion_planner.utils.lr_schedule import CosineAnnealingWarmUpRestarts
from diffusion_planner.utils.data_augmentation import StatePerturbation
from diffusion_planner.utils.dataset import DiffusionPlannerData
from diffusion_planner.utils.tb_log import TensorBoardLogger as Logger
from diffusion_planner.loss import diffusion_loss_func


def boolean(v):
    if isinstance(v, bool):
        return v
    if v.lower() in ('yes', 'true', 't', 'y', '1'):
        return True
    elif v.lower() in ('no', 'false', 'f', 'n', '0'):
        return False
    raise argparse.ArgumentTypeError('Boolean value expected.')


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def ddp_setup_universal(verbose=False, args=None):
    """Works with torchrun (RANK/WORLD_SIZE/LOCAL_RANK) and with srun (SLURM_PROCID)."""
    if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:
        rank = int(os.environ['RANK'])
        world_size = int(os.environ['WORLD_SIZE'])
        gpu = int(os.environ['LOCAL_RANK'])
    elif 'SLURM_PROCID' in os.environ:
        rank = int(os.environ['SLURM_PROCID'])
        world_size = int(os.environ['SLURM_NTASKS'])
        gpu = rank % torch.cuda.device_count()
        os.environ['RANK'] = str(rank)
        os.environ['WORLD_SIZE'] = str(world_size)
        os.environ['LOCAL_RANK'] = str(gpu)
        os.environ.setdefault('MASTER_ADDR', os.environ.get('SLURM_LAUNCH_NODE_IPADDR', '127.0.0.1'))
    else:
        rank, world_size, gpu = 0, 1, 0
        os.environ.setdefault('MASTER_ADDR', '127.0.0.1')
    os.environ.setdefault('MASTER_PORT', args.port)

    torch.cuda.set_device(gpu)
    dist_backend = 'nccl'
    dist.init_process_group(backend=dist_backend, world_size=world_size, rank=rank)
    dist.barrier()
    if verbose and rank == 0:
        print(f'| distributed init (rank {rank}, world {world_size}), gpu {gpu}, backend {dist_backend}', flush=True)
    return rank, gpu, world_size


def get_args():
    parser = argparse.ArgumentParser(description='Training')
    parser.add_argument('--name', type=str, help='log name (default: "diffusion-planner-training")',
                        default='diffusion-planner-training')
    parser.add_argument('--save_dir', type=str, help='save dir for model ckpt', default='.')

    # Data
    parser.add_argument('--train_set', type=str, help='path to train data', default=None)
    parser.add_argument('--train_set_list', type=str, help='data list of train data', default=None)
    parser.add_argument('--future_len', type=int, help='number of time point', default=80)
    parser.add_argument('--time_len', type=int, help='number of time point', default=21)
    parser.add_argument('--agent_state_dim', type=int, help='past state dim for agents', default=11)
    parser.add_argument('--agent_num', type=int, help='number of agents', default=32)
    parser.add_argument('--static_objects_state_dim', type=int, default=10)
    parser.add_argument('--static_objects_num', type=int, default=5)
    parser.add_argument('--lane_len', type=int, default=20)
    parser.add_argument('--lane_state_dim', type=int, default=12)
    parser.add_argument('--lane_num', type=int, default=70)
    parser.add_argument('--route_len', type=int, default=20)
    parser.add_argument('--route_state_dim', type=int, default=12)
    parser.add_argument('--route_num', type=int, default=25)
    parser.add_argument('--augment_prob', type=float, default=0.5)
    parser.add_argument('--normalization_file_path', default='normalization.json')
    parser.add_argument('--use_data_augment', default=True, type=boolean)

    # DataLoader parameters
    parser.add_argument('--pin-mem', action='store_true', help='Pin CPU memory in DataLoader')
    parser.set_defaults(pin_mem=True)

    # Training
    parser.add_argument('--seed', type=int, help='fix random seed', default=3407)
    parser.add_argument('--train_epochs', type=int, help='epochs of training', default=500)
    parser.add_argument('--save_utd', type=int, help='save frequency', default=20)
    parser.add_argument('--batch_size', type=int, help='batch size (default: 2048)', default=2048)
    parser.add_argument('--learning_rate', type=float, help='learning rate (default: 5e-4)', default=5e-4)
    parser.add_argument('--warm_up_epoch', type=int, help='number of warm up', default=5)
    parser.add_argument('--encoder_drop_path_rate', type=float, default=0.1)
    parser.add_argument('--decoder_drop_path_rate', type=float, default=0.1)
    parser.add_argument('--alpha_planning_loss', type=float, default=1.0)
    parser.add_argument('--device', type=str, help='run on which device', default='cuda')
    parser.add_argument('--use_ema', default=True, type=boolean)
    parser.add_argument('--bf16', default=True, type=boolean, help='bf16 autocast for the DiT decoder')

    # Model
    parser.add_argument('--encoder_depth', type=int, default=3)
    parser.add_argument('--decoder_depth', type=int, default=3)
    parser.add_argument('--num_heads', type=int, default=6)
    parser.add_argument('--hidden_dim', type=int, default=192)
    parser.add_argument('--diffusion_model_type', type=str, choices=['score', 'x_start'], default='x_start')
    parser.add_argument('--predicted_neighbor_num', type=int, default=10)

    # distributed training parameters
    parser.add_argument('--ddp', default=True, type=boolean, help='use ddp or not')
    parser.add_argument('--port', default='22323', type=str, help='port')
    args = parser.parse_args()
    args.state_normalizer = StateNormalizer.from_json(args)
    args.observation_normalizer = ObservationNormalizer.from_json(args)
    return args


@torch.no_grad()
def compute_normalizer_stats(loader, device, max_batches=200):
    """Re-estimates mean/std of the ego future (x, y, cos, sin) on a subset of the training data."""
    chunks = []
    for i, batch in enumerate(loader):
        if i >= max_batches:
            break
        chunks.append(batch['ego_agent_future'].reshape(-1, 4))
    data = torch.cat(chunks, dim=0).to(device)
    std, mean = torch.std_mean(data, dim=0)
    return {'mean': mean.tolist(), 'std': std.tolist()}


def train_epoch(data_loader, model, optimizer, args, ema, aug=None):
    epoch_loss = []
    model.train()
    if args.ddp:
        torch.cuda.synchronize()

    for batch in data_loader:
        inputs = {k: v.to(args.device, non_blocking=True) for k, v in batch.items() if k != 'ego_agent_future'}
        ego_future = batch['ego_agent_future'].to(args.device, non_blocking=True)
        neighbors_future = batch['neighbor_agents_future'].to(args.device, non_blocking=True)

        if aug is not None:
            inputs, ego_future, neighbors_future = aug(inputs, ego_future, neighbors_future)

        inputs = args.observation_normalizer(inputs)

        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type='cuda', dtype=torch.bfloat16, enabled=args.bf16):
            loss, _ = diffusion_loss_func(model, inputs, ego_future, neighbors_future, args)
            loss_total = loss['neighbor_prediction_loss'] + args.alpha_planning_loss * loss['ego_planning_loss']

        loss_total.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()

        if ema is not None:
            ema.update(model)

        epoch_loss.append(loss_total.item())

    if args.ddp:
        torch.cuda.synchronize()  # make the epoch time comparable across ranks
    return float(np.mean(epoch_loss)) if epoch_loss else 0.0


def model_training(args):
    # init ddp
    global_rank, rank, world_size = ddp_setup_universal(True, args)
    args.device = f'{args.device}:{rank}' if args.device == 'cuda' else args.device

    if global_rank == 0:
        print(f'------------- {args.name} -------------')
        print(f'Batch size: {args.batch_size}  Learning rate: {args.learning_rate}  Device: {args.device}')
        save_path = os.path.join(args.save_dir, f"training_log/{args.name}/{datetime.now().strftime('%Y-%m-%d-%H:%M:%S')}/")
        os.makedirs(save_path, exist_ok=True)
        with open(os.path.join(save_path, 'args.json'), 'w') as f:
            json.dump({k: v for k, v in vars(args).items() if isinstance(v, (int, float, str, bool))}, f, indent=4)
    else:
        save_path = None

    set_seed(args.seed + global_rank)

    aug = StatePerturbation(augment_prob=args.augment_prob, device=args.device) if args.use_data_augment else None
    train_set = DiffusionPlannerData(args.train_set, args.train_set_list, args.agent_num, args.predicted_neighbor_num,
                                     args.future_len)
    train_sampler = DistributedSampler(train_set, num_replicas=world_size, rank=global_rank, shuffle=True)
    train_loader = DataLoader(train_set, sampler=train_sampler, batch_size=args.batch_size // world_size,
                              num_workers=8, pin_memory=args.pin_mem, drop_last=True)

    if global_rank == 0 and not os.path.exists(args.normalization_file_path):
        stats = compute_normalizer_stats(train_loader, args.device)
        with open(args.normalization_file_path, 'w') as f:
            json.dump({'ego': stats}, f)

    diffusion_planner = Diffusion_Planner(args)
    diffusion_planner = diffusion_planner.to(rank if args.device.startswith('cuda') else args.device)
    diffusion_planner = torch.nn.SyncBatchNorm.convert_sync_batchnorm(diffusion_planner)
    diffusion_planner = torch.nn.parallel.DistributedDataParallel(diffusion_planner, device_ids=[rank],
                                                                  find_unused_parameters=False)

    model_ema = ModelEma(diffusion_planner, decay=0.999, device=args.device) if args.use_ema else None

    optimizer = optim.AdamW(diffusion_planner.parameters(), lr=args.learning_rate)
    scheduler = CosineAnnealingWarmUpRestarts(optimizer, args.train_epochs, args.warm_up_epoch)
    train_logger = Logger(args.name, str(args), save_path) if global_rank == 0 else None

    for epoch in range(args.train_epochs):
        train_sampler.set_epoch(epoch)
        t0 = time.time()
        train_loss = train_epoch(train_loader, diffusion_planner, optimizer, args, model_ema, aug)
        scheduler.step()

        if global_rank == 0:
            train_logger.log({'loss': train_loss, 'lr': optimizer.param_groups[0]['lr'],
                              'epoch_time': time.time() - t0,
                              'max_mem_gb': torch.cuda.max_memory_allocated() / 2 ** 30}, epoch)
            if (epoch + 1) % args.save_utd == 0:
                torch.save({'model': diffusion_planner.module.state_dict(),
                            'ema_state_dict': model_ema.ema.state_dict() if model_ema is not None else None,
                            'optimizer': optimizer.state_dict(), 'epoch': epoch},
                           os.path.join(save_path, f'model_epoch_{epoch + 1}.pth'))
        dist.barrier()

    dist.destroy_process_group()


if __name__ == '__main__':
    args = get_args()
    model_training(args)
