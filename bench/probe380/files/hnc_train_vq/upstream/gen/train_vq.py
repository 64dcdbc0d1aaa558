import os
import time
import argparse
import torch
import torch.nn as nn
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm
from dataset import SolidData, ProfileData, LoopData
from network import SolidEncoder, SolidDecoder, ProfileEncoder, ProfileDecoder, LoopEncoder, LoopDecoder
from utils import get_loss, log_gpu_memory, seed_everything


def setup_distributed(args):
    """torchrun sets RANK / LOCAL_RANK / WORLD_SIZE"""
    if 'RANK' in os.environ and 'WORLD_SIZE' in os.environ:
        args.rank = int(os.environ['RANK'])
        args.world_size = int(os.environ['WORLD_SIZE'])
        args.local_rank = int(os.environ['LOCAL_RANK'])
        args.distributed = True
    else:
        args.rank, args.world_size, args.local_rank = 0, 1, 0
        args.distributed = False

    torch.cuda.set_device(args.local_rank)
    if args.distributed:
        dist.init_process_group(backend='nccl', init_method='env://',
                                world_size=args.world_size, rank=args.rank)
        dist.barrier()
    return torch.device(f'cuda:{args.local_rank}')


def build_models(args):
    if args.format == 'solid':
        encoder, decoder = SolidEncoder(), SolidDecoder()
    elif args.format == 'profile':
        encoder, decoder = ProfileEncoder(), ProfileDecoder()
    else:
        encoder, decoder = LoopEncoder(), LoopDecoder()
    return encoder, decoder


def build_dataset(args):
    if args.format == 'solid':
        return SolidData(args.input, args.invalid, aug=args.aug)
    if args.format == 'profile':
        return ProfileData(args.input, args.invalid, aug=args.aug)
    return LoopData(args.input, args.invalid, aug=args.aug)


def train(args):
    device = setup_distributed(args)
    seed_everything(args.seed + args.rank)
    is_main = args.rank == 0

    torch.backends.cudnn.benchmark = True

    # Initialize dataset loader
    dataset = build_dataset(args)
    sampler = DistributedSampler(dataset, shuffle=True) if args.distributed else None
    dataloader = torch.utils.data.DataLoader(dataset,
                                             shuffle=(sampler is None),
                                             sampler=sampler,
                                             batch_size=args.batchsize,
                                             num_workers=8,
                                             pin_memory=True,
                                             drop_last=True)

    # Initialize models
    encoder, decoder = build_models(args)
    encoder = encoder.cuda(args.local_rank)
    decoder = decoder.cuda(args.local_rank)
    if args.distributed:
        encoder = nn.SyncBatchNorm.convert_sync_batchnorm(encoder)
        encoder = DDP(encoder, device_ids=[args.local_rank], find_unused_parameters=True)
        decoder = DDP(decoder, device_ids=[args.local_rank])

    params = list(encoder.parameters()) + list(decoder.parameters())
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=1e-6)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epoch)
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)

    writer = SummaryWriter(log_dir=args.output) if is_main else None

    iters = 0
    for epoch in range(args.epoch):
        if sampler is not None:
            sampler.set_epoch(epoch)
        encoder.train()
        decoder.train()
        progress_bar = tqdm(total=len(dataloader), disable=not is_main)
        progress_bar.set_description(f"Epoch {epoch}")
        t0 = time.time()

        for param, seq_mask, ignore_mask, param_aug, seq_mask_aug in dataloader:
            param = param.to(device, non_blocking=True)
            seq_mask = seq_mask.to(device, non_blocking=True)
            ignore_mask = ignore_mask.to(device, non_blocking=True)
            param_aug = param_aug.to(device, non_blocking=True)
            seq_mask_aug = seq_mask_aug.to(device, non_blocking=True)

            with torch.cuda.amp.autocast(enabled=args.fp16, dtype=torch.float16):
                # Pass through encoder + VQ
                latent_code, vq_loss, selection, _ = encoder(param_aug, seq_mask_aug, epoch)

                # Pass through decoder
                param_logits = decoder(param[:, :-1], seq_mask[:, :-1], ignore_mask[:, :-1], latent_code)
                param_loss = get_loss(param_logits, param[:, 1:], seq_mask[:, 1:])
                total_loss = param_loss + vq_loss

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(total_loss).backward()
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(params, max_norm=1.0)
            scaler.step(optimizer)
            scaler.update()

            if is_main and iters % 20 == 0:
                writer.add_scalar("Loss/Total", total_loss.item(), iters)
                writer.add_scalar("Loss/Param", param_loss.item(), iters)
                writer.add_scalar("Loss/VQ", vq_loss.item(), iters)
            iters += 1
            progress_bar.update(1)

        progress_bar.close()
        scheduler.step()

        # average code usage across ranks for logging
        if args.distributed:
            usage = torch.bincount(selection.flatten(), minlength=args.code_book).float()
            dist.all_reduce(usage, op=dist.ReduceOp.SUM)
        else:
            usage = torch.bincount(selection.flatten(), minlength=args.code_book).float()

        torch.cuda.synchronize()
        if is_main:
            elapsed = time.time() - t0
            writer.add_scalar("Code/used", (usage > 0).sum().item(), epoch)
            writer.add_scalar("Time/epoch", elapsed, epoch)
            log_gpu_memory(writer, epoch, args.local_rank)
            print(f'epoch {epoch}: {elapsed:.1f}s, peak mem {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GB')
            torch.cuda.reset_peak_memory_stats()

        # save model after n epoch
        if is_main and (epoch + 1) % args.save_every == 0:
            enc = encoder.module if args.distributed else encoder
            dec = decoder.module if args.distributed else decoder
            torch.save(enc.state_dict(), os.path.join(args.output, f'enc_epoch_{epoch + 1}.pt'))
            torch.save(dec.state_dict(), os.path.join(args.output, f'dec_epoch_{epoch + 1}.pt'))

    if args.distributed:
        dist.destroy_process_group()
    if writer is not None:
        writer.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--input", type=str, required=True)
    parser.add_argument("--invalid", type=str, required=True)
    parser.add_argument("--output", type=str, required=True)
    parser.add_argument("--format", type=str, choices=['solid', 'profile', 'loop'], required=True)
    parser.add_argument("--batchsize", type=int, default=256)
    parser.add_argument("--epoch", type=int, default=250)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--code_book", type=int, default=5000)
    parser.add_argument("--save_every", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fp16", action='store_true')
    parser.add_argument("--aug", action='store_true')
    args = parser.parse_args()

    os.makedirs(args.output, exist_ok=True)
    train(args)
