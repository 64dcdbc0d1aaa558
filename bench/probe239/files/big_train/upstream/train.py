"""BigColor training (encoder + BigGAN generator prior), multi-GPU with torchrun.

    torchrun --nproc_per_node=8 train.py --task_name bigcolor_v2 --path_imgnet /data/imagenet \
        --size_batch 60 --num_iter 300000 --amp
"""
import argparse
import os
import pickle
import random
import time
from os.path import join, exists

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter
from torchvision import transforms
from tqdm import tqdm

from models import Colorizer, VGG16Perceptual
from models.biggan import BigGAN, Discriminator
from datasets import ImageNetDataset
from utils.common_utils import lab_fusion, color_enhacne_blend, set_seed, make_grid_multi
from utils.losses import loss_fn_d, loss_fn_g_gan

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument('--task_name', default='bigcolor')
    parser.add_argument('--detail', default='multi gpu')
    # Mode
    parser.add_argument('--use_enhance', action='store_true')
    parser.add_argument('--coef_enhance', type=float, default=1.2)
    parser.add_argument('--use_attention', action='store_true')
    parser.add_argument('--finetune_g', action='store_true')
    parser.add_argument('--finetune_d', action='store_true')
    # IO
    parser.add_argument('--path_log', default='runs')
    parser.add_argument('--path_ckpt_g', default='./pretrained/G_ema_256.pth')
    parser.add_argument('--path_ckpt_d', default='./pretrained/D_256.pth')
    parser.add_argument('--path_imgnet', default='./imgnet')
    parser.add_argument('--path_config', default='./pretrained/config.pickle')
    parser.add_argument('--path_vgg', default='./pretrained/vgg16.pickle')
    # Encoder / generator
    parser.add_argument('--dim_z', type=int, default=119)
    parser.add_argument('--dim_f', type=int, default=16)
    parser.add_argument('--dim_encoder_c', type=int, default=128)
    parser.add_argument('--size_target', type=int, default=256)
    # Optimizer
    parser.add_argument('--lr', type=float, default=5e-5)
    parser.add_argument('--lr_d', type=float, default=2e-5)
    parser.add_argument('--b1', type=float, default=0.0)
    parser.add_argument('--b2', type=float, default=0.999)
    parser.add_argument('--fused_adam', action='store_true', help='apex FusedAdam (GPU only)')
    # Loss
    parser.add_argument('--loss_mse', action='store_true', default=True)
    parser.add_argument('--loss_lpips', action='store_true', default=True)
    parser.add_argument('--loss_adv', action='store_true', default=True)
    parser.add_argument('--coef_mse', type=float, default=1.0)
    parser.add_argument('--coef_lpips', type=float, default=0.2)
    parser.add_argument('--coef_adv', type=float, default=0.03)
    # Training
    parser.add_argument('--seed', type=int, default=42)
    parser.add_argument('--size_batch', type=int, default=60)
    parser.add_argument('--num_worker', type=int, default=8)
    parser.add_argument('--num_iter', type=int, default=300000)
    parser.add_argument('--interval_save_loss', type=int, default=20)
    parser.add_argument('--interval_save_train', type=int, default=150)
    parser.add_argument('--interval_save_ckpt', type=int, default=4000)
    parser.add_argument('--amp', action='store_true', help='mixed precision (torch.cuda.amp)')
    parser.add_argument('--no_tf32', action='store_true')
    return parser.parse_args()


def setup_distributed():
    """torchrun sets RANK / LOCAL_RANK / WORLD_SIZE; fall back to a single GPU otherwise."""
    if 'RANK' not in os.environ:
        return 0, 0, 1
    rank = int(os.environ['RANK'])
    local_rank = int(os.environ['LOCAL_RANK'])
    world_size = int(os.environ['WORLD_SIZE'])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend='nccl', init_method='env://', rank=rank, world_size=world_size)
    dist.barrier()
    return rank, local_rank, world_size


def is_main(rank):
    return rank == 0


def configure_precision(args):
    # Ampere and newer: let matmuls/convs use TF32 unless asked not to
    if not args.no_tf32 and torch.cuda.get_device_capability()[0] >= 8:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = True


def build_optimizer(params, lr, betas, use_fused):
    if use_fused and HAS_APEX:
        return FusedAdam(params, lr=lr, betas=betas, adam_w_mode=False)
    return torch.optim.Adam(params, lr=lr, betas=betas)


def train(G, D, EG, vgg_per, dataloader, sampler, args, dev, rank, world_size):
    writer = None
    if is_main(rank):
        path_log = join(args.path_log, args.task_name)
        os.makedirs(path_log, exist_ok=True)
        writer = SummaryWriter(path_log)
        writer.add_text('config', str(vars(args)))

    params = list(EG.module.encoder.parameters()) if world_size > 1 else list(EG.encoder.parameters())
    if args.finetune_g:
        params += list(G.parameters())
    optimizer_g = build_optimizer(params, args.lr, (args.b1, args.b2), args.fused_adam)
    optimizer_d = build_optimizer(D.parameters(), args.lr_d, (args.b1, args.b2), args.fused_adam)

    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    num_iter = 0
    epoch = 0
    tic = time.time()
    while num_iter < args.num_iter:
        if sampler is not None:
            sampler.set_epoch(epoch)
        tbar = tqdm(dataloader, disable=not is_main(rank))
        for i, (x, c) in enumerate(tbar):
            EG.train()

            x = x.to(dev, non_blocking=True)
            c = c.to(dev, non_blocking=True)

            x_gray = transforms.Grayscale()(x)
            if args.use_enhance:
                x_target = color_enhacne_blend(x, factor=args.coef_enhance)
            else:
                x_target = x

            z = torch.zeros((args.size_batch, args.dim_z), device=dev).normal_(mean=0, std=0.8)

            # ---------------- generator / encoder step ----------------
            with torch.cuda.amp.autocast(enabled=args.amp):
                output = EG(x_gray, c, z)
                output = lab_fusion(x_gray, output)

                loss = 0
                loss_dic = {}
                if args.loss_mse:
                    loss_mse = args.coef_mse * nn.MSELoss()(x_target, output)
                    loss += loss_mse
                    loss_dic['mse'] = loss_mse
                if args.loss_lpips:
                    loss_lpips = args.coef_lpips * vgg_per.perceptual_loss(x_target, output)
                    loss += loss_lpips
                    loss_dic['lpips'] = loss_lpips
                if args.loss_adv:
                    critic = D(output, c)
                    loss_g = loss_fn_g_gan(critic) * args.coef_adv
                    loss += loss_g
                    loss_dic['adv_g'] = loss_g

            optimizer_g.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer_g)

            # ---------------- discriminator step ----------------
            if args.loss_adv:
                with torch.cuda.amp.autocast(args.amp):
                    critic_real = D(x_target, c)
                    critic_fake = D(output.detach(), c)
                    loss_d = loss_fn_d(critic_real=critic_real, critic_fake=critic_fake)
                    loss_dic['adv_d'] = loss_d
                optimizer_d.zero_grad(set_to_none=True)
                scaler.scale(loss_d).backward()
                scaler.step(optimizer_d)
            scaler.update()

            num_iter += 1

            # ---------------- logging ----------------
            if is_main(rank) and num_iter % args.interval_save_loss == 0:
                torch.cuda.synchronize()
                elapsed = time.time() - tic
                tic = time.time()
                for key, value in loss_dic.items():
                    writer.add_scalar(key, value.item(), num_iter)
                writer.add_scalar('speed/iter_per_sec', args.interval_save_loss / elapsed, num_iter)
                writer.add_scalar('mem/max_reserved_gb', torch.cuda.max_memory_reserved(dev) / 2**30, num_iter)
                tbar.set_description(' '.join(f'{k}:{v.item():.4f}' for k, v in loss_dic.items()))

            if is_main(rank) and num_iter % args.interval_save_train == 0:
                make_grid_multi(x_gray, output, x_target, writer, num_iter)

            if is_main(rank) and num_iter % args.interval_save_ckpt == 0:
                path_ckpt = join(args.path_log, args.task_name, f'EG_{num_iter:06d}.ckpt')
                state = EG.module.state_dict() if world_size > 1 else EG.state_dict()
                torch.save(state, path_ckpt)
                torch.save(D.state_dict(), join(args.path_log, args.task_name, f'D_{num_iter:06d}.ckpt'))

            if num_iter >= args.num_iter:
                break
        epoch += 1


def main():
    args = parse()
    rank, local_rank, world_size = setup_distributed()
    set_seed(args.seed + rank)
    configure_precision(args)
    dev = torch.device(f'cuda:{local_rank}')

    if is_main(rank):
        print(f'world size {world_size}, device {torch.cuda.get_device_name(dev)}')

    # Load Configuratuion
    with open(args.path_config, 'rb') as f:
        config = pickle.load(f)

    # Load Generator
    G = BigGAN(**config)
    G.load_state_dict(torch.load(args.path_ckpt_g, map_location='cpu'), strict=False)
    D = Discriminator(**config)
    D.load_state_dict(torch.load(args.path_ckpt_d, map_location='cpu'), strict=False)

    EG = Colorizer(config, args.path_ckpt_g, args.dim_encoder_c, args.dim_f, args.use_attention, id_mid_layer=2,
                   activation='relu', fix_g=(not args.finetune_g), init_e=None)
    EG = nn.SyncBatchNorm.convert_sync_batchnorm(EG) if world_size > 1 else EG
    EG = EG.to(dev)
    D = D.to(dev)

    vgg_per = VGG16Perceptual(args.path_vgg)
    vgg_per = vgg_per.to(dev)

    if world_size > 1:
        EG = DDP(EG, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=True)

    prep = transforms.Compose([
        transforms.RandomResizedCrop(args.size_target, scale=(0.6, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
    ])
    dataset = ImageNetDataset(args.path_imgnet, transform=prep)
    sampler = DistributedSampler(dataset, shuffle=True) if world_size > 1 else None
    dataloader = DataLoader(dataset, batch_size=args.size_batch, shuffle=(sampler is None), sampler=sampler,
                            num_workers=args.num_worker, pin_memory=True, drop_last=True, persistent_workers=True)

    train(G, D, EG, vgg_per, dataloader, sampler, args, dev, rank, world_size)

    if world_size > 1:
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
