"""HifiFace training entry point.

Unofficial re-implementation of "HifiFace: 3D Shape and Semantic Prior Guided High
Fidelity Face Swapping" (IJCAI 2021). One process per GPU, spawned with
torch.multiprocessing; every rank reads the same OmegaConf yaml.

    python train.py --config config/model.yaml --name hififace_r50
"""
import argparse
import os
import random
import time
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from omegaconf import OmegaConf
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

try:
    from apex.optimizers import FusedAdam
    HAS_APEX = True
except ImportError:
    HAS_APEX = False

from dataset.face_dataset import HifiFaceDataset, HifiFaceValDataset
from model.hififace import HifiFaceGenerator
from model.discriminator import MultiScaleDiscriminator
from model.loss import HifiFaceLoss, DiscriminatorLoss
from model.shape_aware_identity import ShapeAwareIdentityExtractor
from utils.checkpoint import save_checkpoint, load_checkpoint
from utils.visualize import make_grid_image


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('-c', '--config', type=str, default='config/model.yaml')
    parser.add_argument('-n', '--name', type=str, required=True, help='experiment name')
    parser.add_argument('-r', '--resume', type=str, default=None, help='checkpoint to resume from')
    parser.add_argument('--single_gpu', action='store_true', help='debug on one GPU without DDP')
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def setup(rank, world_size, cfg):
    os.environ['MASTER_ADDR'] = cfg.dist.master_addr
    os.environ['MASTER_PORT'] = str(cfg.dist.master_port)
    if cfg.dist.backend == 'nccl':
        os.environ['NCCL_ASYNC_ERROR_HANDLING'] = '1'
    dist.init_process_group(cfg.dist.backend, rank=rank, world_size=world_size,
                            timeout=timedelta(minutes=30))
    torch.cuda.set_device(rank)


def cleanup():
    dist.destroy_process_group()


def build_optimizer(params, cfg):
    if HAS_APEX and cfg.train.fused_adam:
        return FusedAdam(params, lr=cfg.train.lr, betas=(cfg.train.beta1, cfg.train.beta2))
    return torch.optim.Adam(params, lr=cfg.train.lr, betas=(cfg.train.beta1, cfg.train.beta2))


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


def accumulate_ema(ema, model, decay=0.999):
    ema_params = dict(ema.named_parameters())
    params = dict(model.named_parameters())
    for k in ema_params.keys():
        ema_params[k].data.mul_(decay).add_(params[k].data, alpha=1 - decay)


@torch.no_grad()
def validate(generator, sid, val_loader, device, writer, step):
    generator.eval()
    id_sims = []
    images = None
    for i, batch in enumerate(val_loader):
        source = batch['source'].to(device)
        target = batch['target'].to(device)
        id_feat, _ = sid(source, target)
        swapped, _, _ = generator(target, id_feat)
        src_id = sid.arcface_embed(source)
        out_id = sid.arcface_embed(swapped)
        id_sims.append(F.cosine_similarity(src_id, out_id).mean().item())
        if i == 0:
            images = make_grid_image(source, target, swapped)
    writer.add_scalar('val/id_similarity', float(np.mean(id_sims)), step)
    if images is not None:
        writer.add_image('val/samples', images, step)
    generator.train()
    return float(np.mean(id_sims))


def main_worker(rank, world_size, cfg, args):
    distributed = world_size > 1 and not args.single_gpu
    if distributed:
        setup(rank, world_size, cfg)
        device = torch.device('cuda', rank)
    else:
        device = torch.device(cfg.device)
    is_main = rank == 0

    set_seed(cfg.seed + rank)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16

    # ---------------- data ----------------
    train_set = HifiFaceDataset(cfg.data.train_root, image_size=cfg.data.image_size,
                                same_prob=cfg.data.same_prob)
    sampler = DistributedSampler(train_set, shuffle=True) if distributed else None
    train_loader = DataLoader(train_set, batch_size=cfg.train.batch_size, shuffle=(sampler is None),
                              sampler=sampler, num_workers=cfg.data.num_workers,
                              pin_memory=True, drop_last=True, persistent_workers=True)
    val_loader = None
    if is_main:
        val_set = HifiFaceValDataset(cfg.data.val_root, image_size=cfg.data.image_size)
        val_loader = DataLoader(val_set, batch_size=8, shuffle=False, num_workers=2)

    # ---------------- models ----------------
    sid = ShapeAwareIdentityExtractor(cfg.model.arcface_ckpt, cfg.model.recon_ckpt,
                                      cfg.model.bfm_folder).eval()
    sid.cuda(rank)
    requires_grad(sid, False)

    generator = HifiFaceGenerator(**cfg.model.generator).cuda(rank)
    discriminator = MultiScaleDiscriminator(**cfg.model.discriminator).cuda(rank)
    g_ema = HifiFaceGenerator(**cfg.model.generator).cuda(rank).eval()
    accumulate_ema(g_ema, generator, 0)

    g_optim = build_optimizer(generator.parameters(), cfg)
    d_optim = build_optimizer(discriminator.parameters(), cfg)

    start_step = 0
    if args.resume is not None:
        start_step = load_checkpoint(args.resume, generator, discriminator, g_ema, g_optim, d_optim,
                                     map_location='cpu')

    if distributed:
        generator = DDP(generator, device_ids=[rank], find_unused_parameters=False)
        discriminator = DDP(discriminator, device_ids=[rank], broadcast_buffers=False)

    criterion_g = HifiFaceLoss(cfg.loss, sid).to(device)
    criterion_d = DiscriminatorLoss()

    scaler_g = torch.cuda.amp.GradScaler(enabled=cfg.train.amp)
    scaler_d = torch.cuda.amp.GradScaler(enabled=cfg.train.amp)

    writer = SummaryWriter(os.path.join(cfg.log_dir, args.name)) if is_main else None
    ckpt_dir = os.path.join(cfg.ckpt_dir, args.name)
    os.makedirs(ckpt_dir, exist_ok=True)

    step = start_step
    epoch = 0
    t0 = time.time()
    while step < cfg.train.max_steps:
        if sampler is not None:
            sampler.set_epoch(epoch)
        for batch in train_loader:
            batch = {k: v.cuda(rank, non_blocking=True) for k, v in batch.items()}
            source, target, same = batch['source'], batch['target'], batch['same']

            # ---------- generator step ----------
            requires_grad(discriminator, False)
            with torch.no_grad():
                id_feat, shape_info = sid(source, target)
            with torch.cuda.amp.autocast(enabled=cfg.train.amp, dtype=amp_dtype):
                swapped, swapped_low, mask = generator(target, id_feat)
                fake_logits = discriminator(swapped)
                loss_g, log_g = criterion_g(source, target, same, swapped, swapped_low, mask,
                                            shape_info, fake_logits)
            g_optim.zero_grad(set_to_none=True)
            scaler_g.scale(loss_g).backward()
            scaler_g.step(g_optim)
            scaler_g.update()
            accumulate_ema(g_ema, generator.module if distributed else generator, cfg.train.ema_decay)

            # ---------- discriminator step ----------
            requires_grad(discriminator, True)
            with torch.cuda.amp.autocast(dtype=amp_dtype, enabled=cfg.train.amp):
                real_logits = discriminator(target)
                fake_logits = discriminator(swapped.detach())
                loss_d, log_d = criterion_d(real_logits, fake_logits)
            d_optim.zero_grad(set_to_none=True)
            scaler_d.scale(loss_d).backward()
            scaler_d.step(d_optim)
            scaler_d.update()

            step += 1
            if is_main and step % cfg.train.log_every == 0:
                elapsed = time.time() - t0
                mem = torch.cuda.max_memory_allocated() / 1024 ** 3
                msg = f'[{step:>7d}] {elapsed / cfg.train.log_every:.3f}s/it mem {mem:.1f}G '
                msg += ' '.join(f'{k}={v:.4f}' for k, v in {**log_g, **log_d}.items())
                print(msg, flush=True)
                for k, v in {**log_g, **log_d}.items():
                    writer.add_scalar(f'train/{k}', v, step)
                t0 = time.time()

            if is_main and step % cfg.train.val_every == 0:
                validate(g_ema, sid, val_loader, device, writer, step)
                torch.cuda.empty_cache()

            if is_main and step % cfg.train.save_every == 0:
                save_checkpoint(os.path.join(ckpt_dir, f'{step:07d}.pt'), step,
                                generator.module if distributed else generator,
                                discriminator.module if distributed else discriminator,
                                g_ema, g_optim, d_optim)

            if distributed:
                dist.barrier()
            if step >= cfg.train.max_steps:
                break
        epoch += 1

    if distributed:
        cleanup()


def main():
    args = parse_args()
    cfg = OmegaConf.load(args.config)
    os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(str(g) for g in cfg.gpus)
    world_size = torch.cuda.device_count()
    print(f'Using {world_size} GPU(s) for experiment {args.name}')
    if world_size > 1 and not args.single_gpu:
        mp.spawn(main_worker, nprocs=world_size, args=(world_size, cfg, args), join=True)
    else:
        main_worker(0, 1, cfg, args)


if __name__ == '__main__':
    main()
