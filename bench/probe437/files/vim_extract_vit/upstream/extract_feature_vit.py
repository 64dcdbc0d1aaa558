#!/usr/bin/env python
import argparse
import os
import pickle
from os.path import basename, splitext

import mmcv
import numpy as np
import torch
from mmcls.apis import multi_gpu_test, single_gpu_test
from mmcls.datasets import build_dataloader, build_dataset
from mmcls.models import build_classifier
from mmcv import Config, DictAction
from mmcv.parallel import MMDataParallel, MMDistributedDataParallel
from mmcv.runner import get_dist_info, init_dist, load_checkpoint
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms
from PIL import Image
from tqdm import tqdm


def parse_args():
    parser = argparse.ArgumentParser(description='Say hello')
    parser.add_argument('data_root', help='Path to data')
    parser.add_argument('--out_file', help='Path to output file')
    parser.add_argument('--cfg', default='configs/vit-base-p16_ft-64xb64_in1k-384.py', help='Path to config')
    parser.add_argument('--checkpoint', default='checkpoints/vit-base-p16_in21k-pre-3rdparty_ft-64xb64_in1k-384_20210928-98e8652b.pth', help='Path to checkpoint')
    parser.add_argument('--img_list', default=None, help='Path to image list')
    parser.add_argument('--batch', type=int, default=256, help='Path to data')
    parser.add_argument('--workers', type=int, default=4, help='Path to data')
    parser.add_argument('--fc_save_path', default=None, help='Path to save fc')
    return parser.parse_args()


class ImageListDataset(Dataset):
    def __init__(self, data_root, img_list, transform=None):
        self.data_root = data_root
        self.transform = transform
        if img_list is not None:
            with open(img_list) as f:
                self.img_list = [os.path.join(data_root, line.strip().split(' ')[0]) for line in f]
        else:
            self.img_list = sorted(
                os.path.join(dp, fn) for dp, _, fns in os.walk(data_root) for fn in fns
                if fn.lower().endswith(('.jpg', '.jpeg', '.png', '.bmp')))

    def __len__(self):
        return len(self.img_list)

    def __getitem__(self, idx):
        img = Image.open(self.img_list[idx]).convert('RGB')
        if self.transform is not None:
            img = self.transform(img)
        return img, 0


def main():
    args = parse_args()

    cfg = Config.fromfile(args.cfg)
    # build the model and load checkpoint
    model = build_classifier(cfg.model)
    checkpoint = load_checkpoint(model, args.checkpoint, map_location='cpu')
    if 'CLASSES' in checkpoint.get('meta', {}):
        model.CLASSES = checkpoint['meta']['CLASSES']
    model = MMDataParallel(model, device_ids=[0])
    model.eval()

    if args.fc_save_path is not None:
        mmcv.mkdir_or_exist(os.path.dirname(args.fc_save_path))
        w = model.module.head.layers.head.weight.cpu().detach().numpy()
        b = model.module.head.layers.head.bias.cpu().detach().numpy()
        with open(args.fc_save_path, 'wb') as f:
            pickle.dump([w, b], f)
        return

    normalize = transforms.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5])
    transform = transforms.Compose([
        transforms.Resize(384, interpolation=transforms.InterpolationMode.BICUBIC),
        transforms.CenterCrop(384),
        transforms.ToTensor(),
        normalize,
    ])
    dataset = ImageListDataset(args.data_root, args.img_list, transform)
    dataloader = DataLoader(dataset, batch_size=args.batch, shuffle=False, num_workers=args.workers,
                            pin_memory=True, drop_last=False)

    features = []
    with torch.no_grad():
        for x, _ in tqdm(dataloader):
            x = x.cuda()
            feat_batch = model(img=x, return_loss=False, post_process=False, extract_feat=True)
            if isinstance(feat_batch, (list, tuple)):
                feat_batch = feat_batch[-1]
            feat_batch = feat_batch.cpu().numpy()
            features.append(feat_batch)

    features = np.concatenate(features, axis=0)
    mmcv.mkdir_or_exist(os.path.dirname(args.out_file))
    with open(args.out_file, 'wb') as f:
        pickle.dump(features, f)


if __name__ == '__main__':
    main()
