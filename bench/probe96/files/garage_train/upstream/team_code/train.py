"""
Training script for TransFuser++ and the other models in the garage.
Launch with torchrun, e.g.
  OMP_NUM_THREADS=16 torchrun --nnodes=1 --nproc_per_node=8 --max_restarts=1 --rdzv_id=42353467 \
      --rdzv_backend=c10d train.py --id tfpp_all_0 --root_dir /data --batch_size 32
"""
import argparse
import datetime
import gc
import json
import os
import pathlib
import pickle
import random
from collections import defaultdict

import numpy as np
from tqdm import tqdm

import torch
import torch.optim as optim
import torch.distributed as dist
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.distributed.elastic.multiprocessing.errors import record
from torch.optim.lr_scheduler import OneCycleLR

from config import GlobalConfig
from model import LidarCenterNet
from data import CARLA_Data
import transfuser_utils as t_u

from diskcache import Cache


def make_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument('--id', type=str, default='tfpp', help='Unique experiment identifier.')
    parser.add_argument('--epochs', type=int, default=31, help='Number of train epochs.')
    parser.add_argument('--lr', type=float, default=3e-4, help='Learning rate.')
    parser.add_argument('--batch_size', type=int, default=32, help='Batch size for one GPU.')
    parser.add_argument('--logdir', type=str, default='log', help='Directory to log data to.')
    parser.add_argument('--load_file', type=str, default=None, help='Model to load for initialization.')
    parser.add_argument('--continue_epoch', type=int, default=1, help='Whether to continue the training from the loaded epoch or from 0.')
    parser.add_argument('--root_dir', type=str, default='/data', help='Root directory of your training data')
    parser.add_argument('--setting', type=str, default='all', help='What training setting to use.')
    parser.add_argument('--schedule_reduce_epoch_01', type=int, default=30)
    parser.add_argument('--schedule_reduce_epoch_02', type=int, default=40)
    parser.add_argument('--backbone', type=str, default='transFuser')
    parser.add_argument('--image_architecture', type=str, default='regnety_032')
    parser.add_argument('--lidar_architecture', type=str, default='regnety_032')
    parser.add_argument('--use_controller_input_prediction', type=int, default=1)
    parser.add_argument('--use_wp_gru', type=int, default=0)
    parser.add_argument('--use_discrete_command', type=int, default=1)
    parser.add_argument('--use_tp', type=int, default=1)
    parser.add_argument('--sync_batch_norm', type=int, default=0)
    parser.add_argument('--zero_redundancy_optimizer', type=int, default=0)
    parser.add_argument('--use_disk_cache', type=int, default=0)
    parser.add_argument('--use_amp', type=int, default=0, help='Whether to train with mixed precision (fp16/bf16).')
    parser.add_argument('--compile', type=int, default=0, help='Whether to torch.compile the model (PyTorch 2.0).')
    parser.add_argument('--cpu_cores', type=int, required=True, help='How many cpu cores are available on the machine.')
    parser.add_argument('--schedule', type=str, default='step', help='step or onecycle')
    parser.add_argument('--val_every', type=int, default=5)
    return parser


@record  # Records error and tracebacks in case of failure
def main():
    torch.cuda.empty_cache()
    parser = make_parser()
    args = parser.parse_args()

    # Use torchrun for starting because it has proper error handling. Local rank will be set automatically
    rank = int(os.environ['RANK'])  # Rank across all processes
    local_rank = int(os.environ['LOCAL_RANK'])  # Rank on Node
    world_size = int(os.environ['WORLD_SIZE'])  # Number of processes
    print(f'RANK, LOCAL_RANK and WORLD_SIZE in environ: {rank}/{local_rank}/{world_size}')

    device = torch.device(f'cuda:{local_rank}')

    torch.distributed.init_process_group(backend='nccl',
                                         init_method='env://',
                                         world_size=world_size,
                                         rank=rank,
                                         timeout=datetime.timedelta(minutes=15))

    ngpus_per_node = torch.cuda.device_count()
    ncpus_per_node = args.cpu_cores
    num_workers = int(ncpus_per_node / ngpus_per_node)
    print('Rank:', rank, 'Device:', device, 'Num GPUs on node:', ngpus_per_node, 'Num CPUs on node:', ncpus_per_node,
          'Num workers:', num_workers)
    torch.cuda.device(device)
    # We want the highest performance
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.deterministic = False
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = True

    # Configure config. Converts all arguments into config attributes
    config = GlobalConfig()
    config.initialize(**vars(args))

    if bool(args.use_amp):
        # bf16 avoids loss scaling on Ampere+; older cards fall back to fp16 + GradScaler
        config.amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    else:
        config.amp_dtype = torch.float32

    # Before normalizing we need to set the losses we don't use to 0
    if config.use_plant:
        config.detailed_loss_weights['loss_semantic'] = 0.0
        config.detailed_loss_weights['loss_bev_semantic'] = 0.0
    factor = 1.0 / sum(config.detailed_loss_weights.values())
    for k in config.detailed_loss_weights:
        config.detailed_loss_weights[k] = config.detailed_loss_weights[k] * factor

    # Data, configuration and model
    if bool(args.use_disk_cache):
        # NOTE: This is specific to our cluster setup where the data is stored on slow storage.
        tmp_folder = str(os.environ.get('SCRATCH', '/tmp'))
        print('Tmp folder for dataset cache: ', tmp_folder)
        tmp_folder = tmp_folder + '/dataset_cache'
        shared_dict = Cache(directory=tmp_folder, size_limit=int(768 * 1024 ** 3))
    else:
        shared_dict = None

    model = LidarCenterNet(config)
    if bool(args.sync_batch_norm):
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    model.cuda(device=device)

    start_epoch = 0
    if args.load_file is not None:
        # Load checkpoint
        print('=============load=================')
        # Add +1 because the epoch before that was already trained
        load_name = str(pathlib.Path(args.load_file).stem)
        if args.continue_epoch:
            start_epoch = int(''.join(filter(str.isdigit, load_name))) + 1
        model.load_state_dict(torch.load(args.load_file, map_location=device), strict=False)

    if bool(args.compile):
        model = torch.compile(model, mode='max-autotune')

    model = DDP(model,
                device_ids=None,
                output_device=None,
                broadcast_buffers=False,
                find_unused_parameters=False)

    if bool(args.zero_redundancy_optimizer):
        # Saves GPU memory during DDP training
        optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=optim.AdamW, lr=args.lr, amsgrad=True)
    else:
        optimizer = optim.AdamW(model.parameters(), lr=args.lr, amsgrad=True)

    train_set = CARLA_Data(root=config.train_data, config=config, shared_dict=shared_dict, rank=rank)
    val_set = CARLA_Data(root=config.val_data, config=config, shared_dict=shared_dict, rank=rank)

    g_cuda = torch.Generator(device='cpu')
    g_cuda.manual_seed(torch.initial_seed())

    sampler_train = torch.utils.data.distributed.DistributedSampler(train_set, shuffle=True, num_replicas=world_size,
                                                                    rank=rank, drop_last=True)
    sampler_val = torch.utils.data.distributed.DistributedSampler(val_set, shuffle=True, num_replicas=world_size,
                                                                  rank=rank, drop_last=True)
    dataloader_train = DataLoader(train_set, sampler=sampler_train, batch_size=args.batch_size,
                                  worker_init_fn=seed_worker, generator=g_cuda, num_workers=num_workers,
                                  pin_memory=False, drop_last=True, persistent_workers=True)
    dataloader_val = DataLoader(val_set, sampler=sampler_val, batch_size=args.batch_size,
                                worker_init_fn=seed_worker, generator=g_cuda, num_workers=num_workers,
                                pin_memory=False, drop_last=True, persistent_workers=True)

    if args.schedule == 'onecycle':
        scheduler = OneCycleLR(optimizer, max_lr=args.lr, pct_start=0.05,
                               total_steps=args.epochs * len(dataloader_train))
    else:
        scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=[args.schedule_reduce_epoch_01,
                                                                          args.schedule_reduce_epoch_02], gamma=0.1)

    scaler = torch.cuda.amp.GradScaler(enabled=bool(args.use_amp) and config.amp_dtype == torch.float16)

    # Create logdir
    if rank == 0:
        pathlib.Path(os.path.join(args.logdir, args.id)).mkdir(parents=True, exist_ok=True)
        writer = SummaryWriter(log_dir=os.path.join(args.logdir, args.id))
        with open(os.path.join(args.logdir, args.id, 'args.txt'), 'w', encoding='utf-8') as f:
            json.dump(args.__dict__, f, indent=2)
        with open(os.path.join(args.logdir, args.id, 'config.pickle'), 'wb') as f2:
            pickle.dump(config, f2, protocol=4)
    else:
        writer = None

    trainer = Engine(model=model, optimizer=optimizer, dataloader_train=dataloader_train,
                     dataloader_val=dataloader_val, args=args, config=config, writer=writer, device=device,
                     rank=rank, world_size=world_size, cur_epoch=start_epoch, scheduler=scheduler, scaler=scaler)

    for epoch in range(trainer.cur_epoch, args.epochs):
        # Update the seed depending on the epoch so that the distributed sampler will use different shuffles
        sampler_train.set_epoch(epoch)
        trainer.train()
        torch.cuda.empty_cache()  # release the activation cache before validation

        if args.setting != 'all' and epoch % args.val_every == 0:
            trainer.validate()

        if bool(args.zero_redundancy_optimizer):
            # To save the whole optimizer we need to gather it on GPU 0.
            optimizer.consolidate_state_dict(0)
        if rank == 0:
            trainer.save()
        gc.collect()

    dist.destroy_process_group()


class Engine(object):
    """
    Engine that runs training.
    """

    def __init__(self, model, optimizer, dataloader_train, dataloader_val, args, config, writer, device, scheduler,
                 scaler, rank=0, world_size=1, cur_epoch=0):
        self.cur_epoch = cur_epoch
        self.model = model
        self.optimizer = optimizer
        self.dataloader_train = dataloader_train
        self.dataloader_val = dataloader_val
        self.args = args
        self.config = config
        self.writer = writer
        self.device = device
        self.rank = rank
        self.world_size = world_size
        self.scheduler = scheduler
        self.scaler = scaler
        self.step = 0
        self.detailed_loss_weights = config.detailed_loss_weights

    def load_data_compute_loss(self, data):
        # Validation = True will compute additional metrics not used for optimization
        rgb = data['rgb'].to(self.device, dtype=torch.float32)
        semantic_label = data['semantic'].to(self.device, dtype=torch.long) if self.config.use_semantic else None
        bev_semantic_label = data['bev_semantic'].to(self.device, dtype=torch.long) if self.config.use_bev_semantic else None
        depth_label = data['depth'].to(self.device, dtype=torch.float32) if self.config.use_depth else None
        lidar = data['lidar'].to(self.device, dtype=torch.float32)
        ego_waypoints = data['ego_waypoints'].to(self.device, dtype=torch.float32)
        target_point = data['target_point'].to(self.device, dtype=torch.float32)
        command = t_u.command_to_one_hot(data['command']).to(self.device, dtype=torch.float32)
        target_speed = data['target_speed'].to(self.device, dtype=torch.long)
        ego_vel = data['speed'].to(self.device, dtype=torch.float32).reshape(-1, 1)
        bb_targets = {k: v.to(self.device) for k, v in data.items() if k.startswith('center_')}

        losses = self.model(rgb=rgb, lidar_bev=lidar, target_point=target_point, ego_vel=ego_vel,
                            command=command, ego_waypoints=ego_waypoints, target_speed=target_speed,
                            semantic_label=semantic_label, bev_semantic_label=bev_semantic_label,
                            depth_label=depth_label, bb_targets=bb_targets)
        loss = torch.zeros(1, dtype=torch.float32, device=self.device)
        detailed = {}
        for key, value in losses.items():
            loss = loss + self.detailed_loss_weights[key] * value
            detailed[key] = float(value.detach())
        return loss, detailed

    def train(self):
        self.model.train()
        num_batches = 0
        loss_epoch = 0.0
        detailed_losses_epoch = defaultdict(float)
        self.optimizer.zero_grad(set_to_none=False)

        # Train loop
        for data in tqdm(self.dataloader_train, disable=self.rank != 0):
            with torch.cuda.amp.autocast(enabled=bool(self.args.use_amp), dtype=self.config.amp_dtype):
                loss, detailed = self.load_data_compute_loss(data)

            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=self.config.grad_clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad(set_to_none=True)

            if self.args.schedule == 'onecycle':
                self.scheduler.step()
            num_batches += 1
            loss_epoch += float(loss.item())
            for k, v in detailed.items():
                detailed_losses_epoch[k] += v
            self.step += 1

        if self.args.schedule != 'onecycle':
            self.scheduler.step()
        self.log_losses(loss_epoch, detailed_losses_epoch, num_batches, '')
        self.cur_epoch += 1

    @torch.inference_mode()
    def validate(self):
        self.model.eval()
        num_batches = 0
        loss_epoch = 0.0
        detailed_val_losses_epoch = defaultdict(float)
        for data in tqdm(self.dataloader_val, disable=self.rank != 0):
            with torch.autocast(device_type='cuda', dtype=self.config.amp_dtype, enabled=bool(self.args.use_amp)):
                loss, detailed = self.load_data_compute_loss(data)
            num_batches += 1
            loss_epoch += float(loss.item())
            for k, v in detailed.items():
                detailed_val_losses_epoch[k] += v
        self.log_losses(loss_epoch, detailed_val_losses_epoch, num_batches, 'val_')

    def log_losses(self, loss_epoch, detailed_losses_epoch, num_batches, prefix=''):
        # Average the loss over all GPUs
        loss_tensor = torch.tensor([loss_epoch / max(num_batches, 1)], device=self.device)
        dist.all_reduce(loss_tensor, op=dist.ReduceOp.SUM)
        if self.rank == 0:
            self.writer.add_scalar(prefix + 'loss_total', loss_tensor.item() / self.world_size, self.cur_epoch)
            for key, value in detailed_losses_epoch.items():
                self.writer.add_scalar(prefix + key, value / max(num_batches, 1), self.cur_epoch)
            self.writer.add_scalar('lr', self.optimizer.param_groups[0]['lr'], self.cur_epoch)

    def save(self):
        model_file = os.path.join(self.args.logdir, self.args.id, f'model_{self.cur_epoch:04d}.pth')
        optimizer_file = os.path.join(self.args.logdir, self.args.id, f'optimizer_{self.cur_epoch:04d}.pth')
        torch.save(self.model.module.state_dict(), model_file)
        torch.save(self.optimizer.state_dict(), optimizer_file)
        torch.save(self.scaler.state_dict(), optimizer_file.replace('optimizer_', 'scaler_'))


# We need to seed the workers individually otherwise random processes in the dataloader return the same values across workers!
def seed_worker(worker_id):  # pylint: disable=locally-disabled, unused-argument
    # Torch initial seed is properly set across the different workers, we need to pass it to numpy and random.
    worker_seed = (torch.initial_seed()) % 2 ** 32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


if __name__ == '__main__':
    # The default method fork can run into deadlocks.
    # To use the dataloader with multiple workers forkserver or spawn should be used.
    torch.multiprocessing.set_start_method('spawn')
    print('Start method of multiprocessing:', torch.multiprocessing.get_start_method())
    main()
