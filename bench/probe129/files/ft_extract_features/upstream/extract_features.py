#!/usr/bin/env python3
"""Dump pooled (pre-logits) features of a timm model for every image in a folder.

Used for linear-probe / kNN evaluation and for the retrieval index. Output is a single
.npy of shape [N, num_features] plus a .txt with the file names in the same order.

    python extract_features.py /data/products/images --model vit_large_patch14_clip_224.openai \
        --batch-size 256 --out feats/products_vitl14 --fp16
"""
import argparse
import logging
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

import timm
from timm.data import create_dataset, create_loader, resolve_data_config
from timm.utils import setup_default_logging

from models.vit_flash import patch_flash_attention

_logger = logging.getLogger('extract')


def parse_args():
    parser = argparse.ArgumentParser(description='timm feature extraction')
    parser.add_argument('data', metavar='DIR', help='image folder (recursively scanned)')
    parser.add_argument('--model', default='vit_base_patch16_224.augreg_in21k')
    parser.add_argument('--checkpoint', default='', help='optional fine-tuned checkpoint')
    parser.add_argument('--batch-size', type=int, default=128)
    parser.add_argument('--workers', type=int, default=8)
    parser.add_argument('--out', default='features/out', help='output prefix (.npy / .txt appended)')
    parser.add_argument('--fp16', action='store_true', help='run the forward pass under fp16 autocast')
    parser.add_argument('--flash', action='store_true', help='swap ViT attention for flash-attn kernels')
    parser.add_argument('--normalize', action='store_true', help='L2-normalize features before saving')
    parser.add_argument('--multi-gpu', action='store_true', help='use all visible GPUs with DataParallel')
    return parser.parse_args()


def build_model(args):
    model = timm.create_model(args.model, pretrained=not args.checkpoint, num_classes=0)
    if args.checkpoint:
        state = torch.load(args.checkpoint, map_location='cpu')
        state = state.get('state_dict_ema') or state.get('state_dict') or state
        missing, unexpected = model.load_state_dict(state, strict=False)
        _logger.info(f'loaded {args.checkpoint}: {len(missing)} missing, {len(unexpected)} unexpected keys')
    if args.flash:
        n = patch_flash_attention(model)
        _logger.info(f'replaced {n} attention blocks with flash-attn')
    return model.eval()


def main():
    setup_default_logging()
    args = parse_args()

    assert torch.cuda.is_available(), 'feature extraction expects a CUDA device'
    _logger.info(f'{torch.cuda.device_count()} GPU(s) visible, using {torch.cuda.get_device_name(0)}')

    model = build_model(args)
    data_config = resolve_data_config({}, model=model)
    model = model.cuda()
    if args.multi_gpu and torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)

    dataset = create_dataset('', root=args.data, split='', is_training=False)
    loader = create_loader(
        dataset,
        input_size=data_config['input_size'],
        batch_size=args.batch_size,
        use_prefetcher=True,
        interpolation=data_config['interpolation'],
        mean=data_config['mean'],
        std=data_config['std'],
        crop_pct=data_config['crop_pct'],
        num_workers=args.workers,
        pin_memory=True,
    )

    feats = []
    start = time.time()
    n_seen = 0
    with torch.inference_mode():
        for i, (images, _) in enumerate(loader):
            with torch.cuda.amp.autocast(enabled=args.fp16, dtype=torch.float16):
                out = model(images)
            out = out.float()
            if args.normalize:
                out = F.normalize(out, dim=-1)
            feats.append(out.cpu().numpy())
            n_seen += images.shape[0]
            if i % 20 == 0:
                rate = n_seen / (time.time() - start)
                _logger.info(f'[{i}/{len(loader)}] {rate:.1f} img/s')

    feats = np.concatenate(feats, axis=0)
    os.makedirs(os.path.dirname(args.out) or '.', exist_ok=True)
    np.save(args.out + '.npy', feats)
    with open(args.out + '.txt', 'w') as f:
        for name in loader.dataset.filenames(basename=False):
            f.write(name + '\n')
    _logger.info(f'saved {feats.shape} features to {args.out}.npy '
                 f'({(time.time() - start):.0f}s, peak mem {torch.cuda.max_memory_reserved() / 2**30:.1f} GiB)')


if __name__ == '__main__':
    main()
