"""
SAFAS training entry point (separability and alignment for domain-generalised face anti-spoofing).

Single node, multi GPU:
    bash scripts/train_dist.sh configs/ICM2O.yaml
Single GPU debugging:
    python train.py --config configs/ICM2O.yaml
"""
import os
import time
import argparse
import logging

import yaml
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from datasets import get_train_datasets, get_test_dataset
from networks import get_model
from losses import SupConLoss, alignment_loss
from utils.misc import (init_distributed, is_main_process, get_world_size, reduce_tensor,
                        gather_tensor, AverageMeter, set_seed, save_checkpoint, gpu_mem_mb)
from utils.performance import performances_cross_db

logger = logging.getLogger('SAFAS')


def parse_args():
    parser = argparse.ArgumentParser(description='SAFAS training')
    parser.add_argument('--config', default='configs/ICM2O.yaml', type=str)
    parser.add_argument('--local_rank', type=int, default=int(os.environ.get('LOCAL_RANK', 0)))
    parser.add_argument('--amp', action='store_true', help='mixed precision (needs tensor cores)')
    parser.add_argument('--resume', default='', type=str)
    parser.add_argument('--seed', default=0, type=int)
    parser.add_argument('--output_dir', default='output', type=str)
    return parser.parse_args()


def build_loaders(cfg, distributed):
    train_set = get_train_datasets(cfg['data']['train'], cfg['data']['root'], cfg['data']['img_size'])
    test_set = get_test_dataset(cfg['data']['test'], cfg['data']['root'], cfg['data']['img_size'])

    train_sampler = DistributedSampler(train_set, shuffle=True, drop_last=True) if distributed else None
    test_sampler = DistributedSampler(test_set, shuffle=False) if distributed else None

    train_loader = DataLoader(train_set, batch_size=cfg['train']['batch_size'],
                              shuffle=(train_sampler is None), sampler=train_sampler,
                              num_workers=cfg['data']['workers'], pin_memory=True, drop_last=True,
                              persistent_workers=True)
    test_loader = DataLoader(test_set, batch_size=cfg['test']['batch_size'], shuffle=False,
                             sampler=test_sampler, num_workers=cfg['data']['workers'], pin_memory=True)
    return train_loader, test_loader, train_sampler


@torch.no_grad()
def evaluate(model, loader, device, distributed):
    model.eval()
    scores, labels, video_ids = [], [], []
    for images, label, vid in loader:
        images = images.to(device, non_blocking=True)
        _, logits = model(images)
        scores.append(F.softmax(logits.float(), dim=1)[:, 1])
        labels.append(label.to(device))
        video_ids.append(vid.to(device))
    scores = torch.cat(scores)
    labels = torch.cat(labels)
    video_ids = torch.cat(video_ids)
    if distributed:
        scores = gather_tensor(scores)
        labels = gather_tensor(labels)
        video_ids = gather_tensor(video_ids)
    model.train()
    if not is_main_process():
        return None
    return performances_cross_db(scores.cpu().numpy(), labels.cpu().numpy(), video_ids.cpu().numpy())


def main():
    args = parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    distributed = init_distributed(args, backend=cfg['dist_backend'])
    device = torch.device(f'cuda:{args.local_rank}')
    set_seed(args.seed + args.local_rank)

    logging.basicConfig(level=logging.INFO if is_main_process() else logging.WARN,
                        format='[%(asctime)s] %(message)s')
    os.makedirs(args.output_dir, exist_ok=True)

    # fp16 autocast only pays off on Volta and newer
    use_amp = args.amp and torch.cuda.get_device_capability(device)[0] >= 7
    logger.info('world size %d, amp %s, device %s', get_world_size(), use_amp, torch.cuda.get_device_name(device))

    train_loader, test_loader, train_sampler = build_loaders(cfg, distributed)

    model = get_model(cfg['model']).to(device)
    if distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank,
                    find_unused_parameters=cfg['train'].get('find_unused', False))

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=cfg['train']['lr'], momentum=0.9,
                                weight_decay=cfg['train']['weight_decay'])
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg['train']['epochs'])
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)

    supcon = SupConLoss(temperature=cfg['train']['temperature']).to(device)
    ce = nn.CrossEntropyLoss().to(device)

    start_epoch = 0
    best_hter = 1.0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=f'cuda:{args.local_rank}')
        (model.module if distributed else model).load_state_dict(ckpt['model'])
        optimizer.load_state_dict(ckpt['optimizer'])
        scheduler.load_state_dict(ckpt['scheduler'])
        scaler.load_state_dict(ckpt['scaler'])
        start_epoch = ckpt['epoch'] + 1
        best_hter = ckpt.get('best_hter', 1.0)
        logger.info('resumed from %s (epoch %d)', args.resume, start_epoch)

    for epoch in range(start_epoch, cfg['train']['epochs']):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        model.train()
        meters = {k: AverageMeter() for k in ('loss', 'ce', 'supcon', 'align')}

        torch.cuda.synchronize(device)
        t0 = time.time()
        for step, (images, labels, domains) in enumerate(train_loader):
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
            domains = domains.to(device, non_blocking=True)

            with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=use_amp):
                feats, logits = model(images)
                loss_ce = ce(logits, labels)
                loss_sup = supcon(F.normalize(feats, dim=1), labels * 10 + domains)
                loss_align = alignment_loss(feats, labels, domains)
                loss = loss_ce + cfg['train']['w_supcon'] * loss_sup + cfg['train']['w_align'] * loss_align

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(params, max_norm=cfg['train']['clip_grad'])
            scaler.step(optimizer)
            scaler.update()

            n = images.size(0)
            for k, v in (('loss', loss), ('ce', loss_ce), ('supcon', loss_sup), ('align', loss_align)):
                meters[k].update(reduce_tensor(v.detach()).item() if distributed else v.item(), n)

            if step % cfg['train']['print_freq'] == 0 and is_main_process():
                logger.info('epoch %d step %d/%d loss %.4f (ce %.4f supcon %.4f align %.4f) lr %.2e',
                            epoch, step, len(train_loader), meters['loss'].avg, meters['ce'].avg,
                            meters['supcon'].avg, meters['align'].avg, optimizer.param_groups[0]['lr'])
        scheduler.step()

        torch.cuda.synchronize()
        epoch_time = time.time() - t0
        if is_main_process():
            imgs_per_sec = len(train_loader) * cfg['train']['batch_size'] * get_world_size() / epoch_time
            logger.info('epoch %d done in %.1fs (%.1f img/s), peak mem %.0f MB',
                        epoch, epoch_time, imgs_per_sec, gpu_mem_mb())

        results = evaluate(model, test_loader, device, distributed)
        if is_main_process():
            hter, auc, tpr = results['HTER'], results['AUC'], results['TPR@FPR=1%']
            logger.info('epoch %d  HTER %.2f  AUC %.2f  TPR@FPR=1%% %.2f', epoch, hter * 100, auc * 100, tpr * 100)
            is_best = hter < best_hter
            best_hter = min(hter, best_hter)
            save_checkpoint({
                'epoch': epoch,
                'model': (model.module if distributed else model).state_dict(),
                'optimizer': optimizer.state_dict(),
                'scheduler': scheduler.state_dict(),
                'scaler': scaler.state_dict(),
                'best_hter': best_hter,
                'cfg': cfg,
            }, is_best, args.output_dir)

    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == '__main__':
    main()
