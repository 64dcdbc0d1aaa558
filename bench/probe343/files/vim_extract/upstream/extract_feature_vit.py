#!/usr/bin/env python
"""Dump ViT-B/16 penultimate features, logits and the fc weight/bias for ViM.

The features are written as one pickle per dataset (N x 768 float32) under
``--out_dir``; ``benchmark.py`` consumes them. Example:

    python extract_feature_vit.py data/imagenet/val.txt \
        configs/vit-base-p16_ft-64xb64_in1k-384.py \
        checkpoints/vit-base-p16_in21k-pre-3rdparty_ft-64xb64_in1k-384.pth \
        --out_file outputs/vit_imagenet_val.pkl
"""
import argparse
import os
import pickle
from os.path import dirname

import mmcv
import numpy as np
import torch
import torchvision as tv
from mmcls.models import build_classifier
from mmcv import Config
from mmcv.runner import load_checkpoint
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm


def parse_args():
    parser = argparse.ArgumentParser(description='Say hello')
    parser.add_argument('data_root', help='Path to data')
    parser.add_argument('--out_file', help='Path to output file')
    parser.add_argument('--cfg', default='configs/vit-base-p16_ft-64xb64_in1k-384.py', help='Path to config')
    parser.add_argument('--checkpoint', default='checkpoints/vit-base-p16_in21k-pre-3rdparty_ft-64xb64_in1k-384.pth', help='Path to checkpoint')
    parser.add_argument('--img_list', default=None, help='Path to image list')
    parser.add_argument('--batch', type=int, default=256, help='Path to data')
    parser.add_argument('--workers', type=int, default=4, help='Path to data')
    parser.add_argument('--fc_save_path', default=None, help='Path to save fc')
    parser.add_argument('--fp16', action='store_true', help='extract under torch.cuda.amp autocast')

    return parser.parse_args()


class ImageListDataset(Dataset):
    def __init__(self, root, img_list, transform=None):
        super().__init__()
        self.root = root
        with open(img_list) as f:
            self.samples = [line.strip().split(' ')[0] for line in f if line.strip()]
        self.transform = transform

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, idx):
        path = os.path.join(self.root, self.samples[idx])
        with open(path, 'rb') as f:
            img = Image.open(f).convert('RGB')
        if self.transform is not None:
            img = self.transform(img)
        return img, 0


def main():
    args = parse_args()

    torch.backends.cudnn.benchmark = True
    # TF32 matmuls change the 4th decimal of the features on Ampere; the
    # numbers in the paper were produced with TF32 disabled
    if torch.cuda.get_device_capability(0)[0] >= 8:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False

    cfg = Config.fromfile(args.cfg)
    model = build_classifier(cfg.model)
    load_checkpoint(model, args.checkpoint, map_location='cuda:0')
    model = model.cuda()
    model.eval()

    if args.fc_save_path is not None:
        os.makedirs(dirname(args.fc_save_path), exist_ok=True)
        w = model.head.layers.head.weight.cpu().detach().numpy()
        b = model.head.layers.head.bias.cpu().detach().numpy()
        with open(args.fc_save_path, 'wb') as f:
            pickle.dump([w, b], f)
        return

    transform = tv.transforms.Compose([
        tv.transforms.Resize((384, 384)),
        tv.transforms.ToTensor(),
        tv.transforms.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5]),
    ])

    if args.img_list not in [None, 'None']:
        dataset = ImageListDataset(args.data_root, args.img_list, transform)
    else:
        dataset = tv.datasets.ImageFolder(args.data_root, transform)

    dataloader = DataLoader(dataset,
                            batch_size=args.batch,
                            shuffle=False,
                            num_workers=args.workers,
                            pin_memory=True,
                            drop_last=False)

    features = []
    with torch.no_grad():
        for x, _ in tqdm(dataloader):
            x = x.cuda(non_blocking=True)
            with torch.cuda.amp.autocast(enabled=args.fp16):
                feat_batch = model.backbone(x)[-1]
                feat_batch = model.neck(feat_batch) if model.with_neck else feat_batch
                if isinstance(feat_batch, tuple):
                    feat_batch = feat_batch[-1]
                # cls token after the pre-logits layer
                feat_batch = model.head.pre_logits(feat_batch)
            features.append(feat_batch.float().cpu().numpy())

    features = np.concatenate(features, axis=0)
    os.makedirs(dirname(args.out_file), exist_ok=True)
    with open(args.out_file, 'wb') as f:
        pickle.dump(features, f)
    print('saved {} features of dim {} to {}'.format(features.shape[0], features.shape[1], args.out_file))


if __name__ == '__main__':
    main()
