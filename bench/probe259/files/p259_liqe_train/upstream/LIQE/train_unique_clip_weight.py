"""Multi-task CLIP fine-tuning for blind IQA (LIQE).

Jointly learns quality level, scene category and distortion type with one text prompt per
(quality, scene, distortion) triple. Trains on the union of LIVE, CSIQ, KADID-10k, BID,
LIVE Challenge and KonIQ-10k ("unique" sampling).

    python train_unique_clip_weight.py --gpu 0 --batch_size 16 --epochs 80
"""
import argparse
import os
import random
import time
from itertools import product

import numpy as np
import scipy.stats
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, ConcatDataset
from torchvision import transforms

import clip
from utils import set_dataset_qonly, _preprocess2, _preprocess3, convert_models_to_fp32
from MNL_Loss import Fidelity_Loss, Multi_Fidelity_Loss, loss_m4

##############################textual template####################################
dists = ['jpeg2000 compression', 'jpeg compression', 'white noise', 'gaussian blur', 'fastfading', 'fnoise',
         'contrast', 'lens', 'motion', 'diffusion', 'shifting', 'color quantization', 'oversaturation',
         'desaturation', 'white with color', 'impulse', 'multiplicative', 'white noise with denoise', 'brighten',
         'darken', 'shifting the mean', 'jitter', 'noneccentricity patch', 'pixelate', 'quantization',
         'color blocking', 'sharpness', 'realistic blur', 'realistic noise', 'underexposure', 'overexposure',
         'realistic contrast change', 'other realistic']

scenes = ['animal', 'cityscape', 'human', 'indoor', 'landscape', 'night', 'plant', 'still_life', 'others']
qualitys = ['bad', 'poor', 'fair', 'good', 'perfect']

type2label = {'jpeg2000 compression': 0, 'jpeg compression': 1, 'white noise': 2, 'gaussian blur': 3,
              'fastfading': 4, 'fnoise': 5, 'contrast': 6, 'lens': 7, 'motion': 8, 'diffusion': 9,
              'shifting': 10, 'color quantization': 11, 'oversaturation': 12, 'desaturation': 13,
              'white with color': 14, 'impulse': 15, 'multiplicative': 16, 'white noise with denoise': 17,
              'brighten': 18, 'darken': 19, 'shifting the mean': 20, 'jitter': 21, 'noneccentricity patch': 22,
              'pixelate': 23, 'quantization': 24, 'color blocking': 25, 'sharpness': 26, 'realistic blur': 27,
              'realistic noise': 28, 'underexposure': 29, 'overexposure': 30, 'realistic contrast change': 31,
              'other realistic': 32}

dist_map = {'jpeg2000 compression': 'jpeg2000 compression', 'jpeg compression': 'jpeg compression',
            'white noise': 'noise', 'gaussian blur': 'blur', 'fastfading': 'jpeg2000 compression',
            'fnoise': 'noise', 'contrast': 'contrast', 'lens': 'blur', 'motion': 'blur',
            'diffusion': 'color', 'shifting': 'blur', 'color quantization': 'quantization',
            'oversaturation': 'color', 'desaturation': 'color', 'white with color': 'noise',
            'impulse': 'noise', 'multiplicative': 'noise', 'white noise with denoise': 'noise',
            'brighten': 'overexposure', 'darken': 'underexposure', 'shifting the mean': 'other',
            'jitter': 'spatial', 'noneccentricity patch': 'spatial', 'pixelate': 'spatial',
            'quantization': 'quantization', 'color blocking': 'spatial', 'sharpness': 'contrast',
            'realistic blur': 'blur', 'realistic noise': 'noise', 'underexposure': 'underexposure',
            'overexposure': 'overexposure', 'realistic contrast change': 'contrast',
            'other realistic': 'other'}

map2label = {'jpeg2000 compression': 0, 'jpeg compression': 1, 'noise': 2, 'blur': 3, 'color': 4,
             'contrast': 5, 'overexposure': 6, 'underexposure': 7, 'spatial': 8, 'quantization': 9, 'other': 10}

dists_map = ['jpeg2000 compression', 'jpeg compression', 'noise', 'blur', 'color', 'contrast', 'overexposure',
             'underexposure', 'spatial', 'quantization', 'other']

scene2label = {'animal': 0, 'cityscape': 1, 'human': 2, 'indoor': 3, 'landscape': 4, 'night': 5, 'plant': 6,
               'still_life': 7, 'others': 8}

##############################general setup####################################
live_set = '../IQA_Database/databaserelease2/'
csiq_set = '../IQA_Database/CSIQ/'
bid_set = '../IQA_Database/BID/'
clive_set = '../IQA_Database/ChallengeDB_release/'
koniq10k_set = '../IQA_Database/koniq-10k/1024x768/'
kadid10k_set = '../IQA_Database/kadid10k/'

seed = 20200626
num_patch = 15


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--gpu', type=str, default='0', help='which GPU to train on')
    parser.add_argument('--batch_size', type=int, default=16)
    parser.add_argument('--epochs', type=int, default=80)
    parser.add_argument('--lr', type=float, default=5e-6)
    parser.add_argument('--weight_decay', type=float, default=0.001)
    parser.add_argument('--num_workers', type=int, default=8)
    parser.add_argument('--amp', action='store_true', help='mixed precision training')
    parser.add_argument('--save_dir', type=str, default='./checkpoints')
    parser.add_argument('--session', type=int, default=0, help='train/test split index')
    return parser.parse_args()


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def do_batch(model, x, text, device):
    batch_size = x.size(0)
    num_patch = x.size(1)

    x = x.view(-1, x.size(2), x.size(3), x.size(4))

    logits_per_image, logits_per_text = model.forward(x, text)

    logits_per_image = logits_per_image.view(batch_size, num_patch, -1)
    logits_per_text = logits_per_text.view(-1, batch_size, num_patch)

    logits_per_image = logits_per_image.mean(1)
    logits_per_text = logits_per_text.mean(2)

    logits_per_image = F.softmax(logits_per_image, dim=1)

    return logits_per_image, logits_per_text


def train(model, optimizer, scaler, scheduler, loader, joint_texts, epoch, device, use_amp):
    model.train()
    loss_fn = Multi_Fidelity_Loss()
    running_loss = 0.0
    start = time.time()
    for step, sample_batched in enumerate(loader, 0):
        x, gmos, dist, scene, valid = sample_batched['I'], sample_batched['mos'], sample_batched['dist_type'], \
                                     sample_batched['scene_content'], sample_batched['valid']
        x = x.to(device)
        gmos = gmos.to(device)

        optimizer.zero_grad()
        with torch.cuda.amp.autocast(enabled=use_amp):
            logits_per_image, _ = do_batch(model, x, joint_texts, device)
            logits_per_image = logits_per_image.view(-1, len(qualitys), len(scenes), len(dists_map))
            logits_quality = logits_per_image.sum(3).sum(2)
            logits_scene = logits_per_image.sum(3).sum(1)
            logits_distortion = logits_per_image.sum(1).sum(1)

            quality_pred = 1 * logits_quality[:, 0] + 2 * logits_quality[:, 1] + 3 * logits_quality[:, 2] + \
                4 * logits_quality[:, 3] + 5 * logits_quality[:, 4]

            total_loss = loss_m4(quality_pred, gmos.detach())
            scene_label = scene.to(device).float()
            total_loss = total_loss + 0.5 * loss_fn(logits_scene, scene_label)
            dist_label = F.one_hot(dist.to(device).long(), num_classes=len(dists_map)).float()
            total_loss = total_loss + 0.5 * loss_fn(logits_distortion, dist_label)

        scaler.scale(total_loss).backward()
        # CLIP weights are kept in fp16 on GPU by clip.load; step in fp32 and convert back
        if device != 'cpu':
            convert_models_to_fp32(model)
            scaler.step(optimizer)
            clip.model.convert_weights(model)
        else:
            scaler.step(optimizer)
        scaler.update()
        scheduler.step()

        running_loss = 0.9 * running_loss + 0.1 * total_loss.item() if step else total_loss.item()
        if step % 100 == 0:
            print(f'epoch {epoch} step {step}/{len(loader)} loss {running_loss:.4f} '
                  f'({(time.time() - start) / (step + 1):.2f}s/it)')
    return running_loss


@torch.no_grad()
def evaluate(model, loader, joint_texts, device):
    model.eval()
    q_mos, q_hat = [], []
    for sample_batched in loader:
        x, gmos = sample_batched['I'], sample_batched['mos']
        x = x.to(device)
        logits_per_image, _ = do_batch(model, x, joint_texts, device)
        logits_per_image = logits_per_image.view(-1, len(qualitys), len(scenes), len(dists_map))
        logits_quality = logits_per_image.sum(3).sum(2)
        quality_preds = 1 * logits_quality[:, 0] + 2 * logits_quality[:, 1] + 3 * logits_quality[:, 2] + \
            4 * logits_quality[:, 3] + 5 * logits_quality[:, 4]
        q_hat.extend(quality_preds.cpu().tolist())
        q_mos.extend(gmos.tolist())
    srcc = scipy.stats.spearmanr(q_mos, q_hat)[0]
    plcc = scipy.stats.pearsonr(q_mos, q_hat)[0]
    return srcc, plcc


def main():
    args = parse_args()
    set_seed(seed + args.session)
    os.makedirs(args.save_dir, exist_ok=True)

    device = 'cuda:' + args.gpu if torch.cuda.is_available() else 'cpu'
    model, preprocess = clip.load('ViT-B/32', device=device, jit=False)

    joint_texts = torch.cat([clip.tokenize(f'a photo of a {c} with {d} artifacts, which is of {q} quality')
                             for q, c, d in product(qualitys, scenes, dists_map)]).to(device)

    preprocess2 = _preprocess2()
    preprocess3 = _preprocess3()

    session = args.session
    train_loaders = []
    for name, root in [('live', live_set), ('csiq', csiq_set), ('bid', bid_set), ('clive', clive_set),
                       ('koniq10k', koniq10k_set), ('kadid10k', kadid10k_set)]:
        csv_file = os.path.join('./IQA_Database', name, f'splits2/{session + 1}/{name}_train_clip.txt')
        train_loaders.append(set_dataset_qonly(csv_file, 32, root, seed, args.num_workers, preprocess3,
                                               num_patch, False, set=0))
    train_set = ConcatDataset([l.dataset for l in train_loaders])
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, pin_memory=True,
                              num_workers=args.num_workers, drop_last=True)

    val_loaders = {}
    for name, root in [('live', live_set), ('csiq', csiq_set), ('koniq10k', koniq10k_set),
                       ('kadid10k', kadid10k_set)]:
        csv_file = os.path.join('./IQA_Database', name, f'splits2/{session + 1}/{name}_val_clip.txt')
        val_loaders[name] = set_dataset_qonly(csv_file, 16, root, seed, args.num_workers, preprocess2,
                                              num_patch, True, set=1)

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay, fused=torch.cuda.is_available())
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs * len(train_loader))
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    best = {k: -1.0 for k in val_loaders}
    for epoch in range(args.epochs):
        loss = train(model, optimizer, scaler, scheduler, train_loader, joint_texts, epoch, device, args.amp)
        log = [f'epoch {epoch}: loss {loss:.4f}']
        for name, loader in val_loaders.items():
            srcc, plcc = evaluate(model, loader, joint_texts, device)
            log.append(f'{name} srcc {srcc:.4f} plcc {plcc:.4f}')
            if srcc > best[name]:
                best[name] = srcc
                torch.save({'epoch': epoch, 'model_state_dict': model.state_dict(),
                            'optimizer_state_dict': optimizer.state_dict(), 'srcc': srcc},
                           os.path.join(args.save_dir, f'liqe_{name}_session{session}.pt'))
        print(' | '.join(log))
        if torch.cuda.is_available():
            print(f'max memory {torch.cuda.max_memory_allocated() / 1024 ** 3:.1f} GB')


if __name__ == '__main__':
    main()
