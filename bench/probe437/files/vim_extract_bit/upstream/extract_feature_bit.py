#!/usr/bin/env python
import argparse
import os
import pickle

import numpy as np
import torch
import torchvision as tv
from torch.utils.data import DataLoader
from tqdm import tqdm

import resnetv2
from list_dataset import ImageFilelist


def parse_args():
    parser = argparse.ArgumentParser(description='Extract BiT penultimate features')
    parser.add_argument('data_root', help='Path to data')
    parser.add_argument('out_file', help='Path to output file')
    parser.add_argument('--img_list', default=None, help='Path to image list')
    parser.add_argument('--model', default='BiT-S-R101x1', help='BiT model name')
    parser.add_argument('--model_path', default='checkpoints/BiT-S-R101x1-flat-finetune.pth.tar',
                        help='Path to finetuned BiT checkpoint')
    parser.add_argument('--batch', type=int, default=256, help='batch size')
    parser.add_argument('--workers', type=int, default=8, help='dataloader workers')
    parser.add_argument('--fc_save_path', default=None, help='Path to save fc')
    return parser.parse_args()


def main():
    args = parse_args()
    torch.backends.cudnn.benchmark = True

    model = resnetv2.KNOWN_MODELS[args.model](head_size=1000)
    state_dict = torch.load(args.model_path)
    model.load_state_dict_custom(state_dict['model'])

    if args.fc_save_path is not None:
        os.makedirs(os.path.dirname(args.fc_save_path), exist_ok=True)
        w = model.head.conv.weight.cpu().detach().squeeze().numpy()
        b = model.head.conv.bias.cpu().detach().squeeze().numpy()
        with open(args.fc_save_path, 'wb') as f:
            pickle.dump([w, b], f)
        return

    model = torch.nn.DataParallel(model)
    model = model.cuda()
    model.eval()

    transform = tv.transforms.Compose([
        tv.transforms.Resize((480, 480)),
        tv.transforms.ToTensor(),
        tv.transforms.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
    ])
    dataset = ImageFilelist(args.data_root, args.img_list, transform)
    dataloader = DataLoader(dataset, batch_size=args.batch, shuffle=False,
                            num_workers=args.workers, pin_memory=True, drop_last=False)

    features = []
    with torch.no_grad():
        for x, _ in tqdm(dataloader):
            x = x.cuda(non_blocking=True)
            feat_batch = model.module.forward_features(x)
            feat_batch = feat_batch.squeeze().cpu().numpy()
            features.append(feat_batch)

    features = np.concatenate(features, axis=0)
    os.makedirs(os.path.dirname(args.out_file), exist_ok=True)
    with open(args.out_file, 'wb') as f:
        pickle.dump(features, f)


if __name__ == '__main__':
    main()
