"""
Train uniGradICON on the composite dataset (lung CT, knee MRI, brain MRI, abdomen CT).

Single node, all visible GPUs via DataParallel (default, what the paper used):

    CUDA_VISIBLE_DEVICES=0,1,2,3 python training/train.py --batch_size 4

Or one process per GPU with DistributedDataParallel:

    torchrun --nproc_per_node 4 training/train.py --ddp --batch_size 1
"""
import argparse
import glob
import os
import random
from datetime import datetime

import footsteps
import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
import tqdm
from torch.utils.tensorboard import SummaryWriter

import icon_registration as icon
import icon_registration.networks as networks
from unigradicon import make_network, make_sim

try:
    import pynvml
    pynvml.nvmlInit()
    _HAS_NVML = True
except Exception:  # no driver / library: just skip utilisation logging
    _HAS_NVML = False

input_shape = [1, 1, 175, 175, 175]


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data_root", default="/playpen-raid2/Data/uniGradICON")
    p.add_argument("--batch_size", type=int, default=4)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--epochs_stage1", type=int, default=801)
    p.add_argument("--epochs_stage2", type=int, default=201)
    p.add_argument("--eval_period", type=int, default=20)
    p.add_argument("--save_period", type=int, default=20)
    p.add_argument("--lmbda", type=float, default=1.5)
    p.add_argument("--ddp", action="store_true", help="use DistributedDataParallel (launch with torchrun)")
    p.add_argument("--workers", type=int, default=4)
    return p.parse_args()


class PairDataset(torch.utils.data.Dataset):
    """Random same-dataset pairs from preprocessed 175^3 .npy volumes."""

    def __init__(self, roots, length=4000):
        self.groups = [sorted(glob.glob(os.path.join(r, "*.npy"))) for r in roots]
        self.groups = [g for g in self.groups if len(g) > 1]
        self.length = length

    def __len__(self):
        return self.length

    def __getitem__(self, idx):
        group = random.choice(self.groups)
        a, b = random.sample(group, 2)
        image_A = torch.from_numpy(np.load(a)).float()[None]
        image_B = torch.from_numpy(np.load(b)).float()[None]
        return image_A, image_B


def augment(image_A, image_B):
    device = image_A.device
    identity_list = []
    for i in range(image_A.shape[0]):
        identity = torch.tensor([[[1., 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]], device=device)
        idxs = set((0, 1, 2))
        for j in range(3):
            k = random.choice(list(idxs))
            idxs.remove(k)
            identity[0, j, k] = 1
        identity = identity * (torch.randint_like(identity, 0, 2, device=device) * 2 - 1)
        identity_list.append(identity)

    identity = torch.cat(identity_list)

    noise = torch.randn((image_A.shape[0], 3, 4), device=device)

    forward = identity + .05 * noise

    grid_shape = list(image_A.shape)
    grid_shape[1] = 3
    forward_grid = F.affine_grid(forward, grid_shape)

    warped_A = F.grid_sample(image_A, forward_grid, padding_mode='border')

    noise = torch.randn((image_A.shape[0], 3, 4), device=device)
    forward = identity + .05 * noise

    forward_grid = F.affine_grid(forward, grid_shape)
    warped_B = F.grid_sample(image_B, forward_grid, padding_mode='border')

    return warped_A, warped_B


def write_stats(writer, stats, ite, prefix=""):
    for k, v in icon.losses.to_floats(stats)._asdict().items():
        writer.add_scalar(f"{prefix}{k}", v, ite)


def log_gpu(writer, ite):
    if not _HAS_NVML:
        return
    for i in range(pynvml.nvmlDeviceGetCount()):
        h = pynvml.nvmlDeviceGetHandleByIndex(i)
        util = pynvml.nvmlDeviceGetUtilizationRates(h)
        writer.add_scalar(f"gpu/{i}/util", util.gpu, ite)


def train_kernel(optimizer, net, moving_image, fixed_image, writer, ite):
    optimizer.zero_grad()
    loss_object = net(moving_image, fixed_image)
    loss = torch.mean(loss_object.all_loss)
    loss.backward()
    optimizer.step()
    if writer is not None:
        print(icon.losses.to_floats(loss_object))
        write_stats(writer, loss_object, ite, prefix="train/")


def train(net, optimizer, data_loader, epochs, start_iteration=0, save_period=20, unwrapped_net=None,
          data_augmenter=None, is_main=True, stage="Step_1"):
    if unwrapped_net is None:
        unwrapped_net = net

    writer = None
    if is_main:
        writer = SummaryWriter(footsteps.output_dir + "/" + stage + "_" + datetime.now().strftime("%Y%m%d-%H%M%S"),
                               flush_secs=30)

    iteration = start_iteration
    for epoch in tqdm.tqdm(range(epochs), disable=not is_main):
        if hasattr(data_loader.sampler, "set_epoch"):
            data_loader.sampler.set_epoch(epoch)
        for moving_image, fixed_image in data_loader:
            moving_image, fixed_image = moving_image.cuda(), fixed_image.cuda()
            if data_augmenter is not None:
                with torch.no_grad():
                    moving_image, fixed_image = data_augmenter(moving_image, fixed_image)
            train_kernel(optimizer, net, moving_image, fixed_image, writer, iteration)
            iteration += 1

        if is_main:
            log_gpu(writer, iteration)
            if epoch % save_period == 0:
                torch.save(optimizer.state_dict(),
                           footsteps.output_dir + "checkpoints/optimizer_weights_" + str(epoch))
                torch.save(unwrapped_net.regis_net.state_dict(),
                           footsteps.output_dir + "checkpoints/network_weights_" + str(epoch))
    return iteration


def setup_distributed(args):
    if not args.ddp:
        return 0, 1, 0
    dist.init_process_group(backend="nccl")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    return rank, world_size, local_rank


def make_loader(dataset, args, rank, world_size):
    sampler = None
    if args.ddp:
        sampler = torch.utils.data.distributed.DistributedSampler(dataset, num_replicas=world_size, rank=rank)
    return torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=sampler is None,
                                       sampler=sampler, num_workers=args.workers, drop_last=True,
                                       pin_memory=True, persistent_workers=args.workers > 0)


def wrap(net, args, local_rank):
    if args.ddp:
        net = net.cuda(local_rank)
        return torch.nn.parallel.DistributedDataParallel(net, device_ids=[local_rank],
                                                         find_unused_parameters=False)
    if torch.cuda.device_count() > 1:
        return torch.nn.DataParallel(net).cuda()
    return net.cuda()


def main():
    args = parse_args()
    rank, world_size, local_rank = setup_distributed(args)
    is_main = rank == 0
    if is_main:
        footsteps.initialize(output_root="results/")
        os.makedirs(footsteps.output_dir + "checkpoints", exist_ok=True)

    roots = [os.path.join(args.data_root, d) for d in ("lung_ct", "knee_mri", "brain_mri", "abdomen_ct")]
    dataset = PairDataset(roots)
    loader = make_loader(dataset, args, rank, world_size)

    # Stage 1: first two resolution levels
    net = make_network(input_shape, include_last_step=False, lmbda=args.lmbda)
    net_par = wrap(net, args, local_rank)
    optimizer = torch.optim.Adam(net_par.parameters(), lr=args.lr)
    net_par.train()
    it = train(net_par, optimizer, loader, args.epochs_stage1, unwrapped_net=net, data_augmenter=augment,
               is_main=is_main, save_period=args.save_period, stage="Step_1")
    if is_main:
        torch.save(net.regis_net.state_dict(), footsteps.output_dir + "Step_1_final.trch")
    if args.ddp:
        dist.barrier()

    # Stage 2: add the full-resolution step, initialised from stage 1
    net_2 = make_network(input_shape, include_last_step=True, lmbda=args.lmbda)
    net_2.regis_net.netPhi.load_state_dict(
        torch.load(footsteps.output_dir + "Step_1_final.trch", map_location="cpu"))
    net_par = wrap(net_2, args, local_rank)
    optimizer = torch.optim.Adam(net_par.parameters(), lr=args.lr)
    net_par.train()
    train(net_par, optimizer, loader, args.epochs_stage2, start_iteration=it, unwrapped_net=net_2,
          data_augmenter=augment, is_main=is_main, save_period=args.save_period, stage="Step_2")
    if is_main:
        torch.save(net_2.regis_net.state_dict(), footsteps.output_dir + "Step_2_final.trch")
    if args.ddp:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
