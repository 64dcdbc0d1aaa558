#!/usr/bin/env python
# -*- coding: utf-8 -*-
# @Filename:    test.py
# @Project:     GuideNet
# @Time:        2020/12/18
#
# Produce KITTI online-benchmark submissions and measure the per-frame runtime.
#     python test.py --config GNS.yaml --checkpoint checkpoints/GNS.pth --gpu 0

import os
import argparse

import numpy as np
import yaml
from PIL import Image
from easydict import EasyDict as edict
from tqdm import tqdm

import torch
import torch.nn.functional as F

import datasets
import models


def parse_args():
    parser = argparse.ArgumentParser(description='GuideNet test / submission')
    parser.add_argument('--config', type=str, default='GNS.yaml')
    parser.add_argument('--checkpoint', type=str, required=True)
    parser.add_argument('--gpu', type=int, default=0, help='GPU id used for inference')
    parser.add_argument('--out', type=str, default='./results/submission')
    parser.add_argument('--fp16', action='store_true', help='half precision inference')
    parser.add_argument('--warmup', type=int, default=20, help='iterations excluded from timing')
    parser.add_argument('--split', type=str, default='test', choices=['test', 'selval'])
    return parser.parse_args()


def load_config(name):
    with open(os.path.join('configs', name), 'r') as f:
        return edict(yaml.load(f, Loader=yaml.FullLoader))


def load_net(config, checkpoint, device):
    net = getattr(models, config.model)()
    cp = torch.load(checkpoint, map_location='cpu')
    state = cp['net'] if 'net' in cp else cp
    # checkpoints trained with DataParallel carry the 'module.' prefix
    state = {k[7:] if k.startswith('module.') else k: v for k, v in state.items()}
    net.load_state_dict(state, strict=True)
    net = net.to(device)
    net.eval()
    return net


def save_depth_png(depth, path):
    """KITTI format: uint16 png, depth in meters * 256."""
    depth = np.clip(depth, 0, 300)
    img = (depth * 256.0).astype(np.uint16)
    Image.fromarray(img).save(path)


def pad_to_multiple(x, multiple=32):
    h, w = x.shape[-2:]
    ph = (multiple - h % multiple) % multiple
    pw = (multiple - w % multiple) % multiple
    if ph == 0 and pw == 0:
        return x, (0, 0)
    return F.pad(x, (0, pw, ph, 0), mode='replicate'), (ph, pw)


@torch.no_grad()
def run(args):
    config = load_config(args.config)
    torch.cuda.set_device(args.gpu)
    device = torch.device('cuda:{}'.format(args.gpu))
    torch.backends.cudnn.benchmark = True

    net = load_net(config, args.checkpoint, device)
    if args.fp16:
        net = net.half()

    params = dict(config.test_params)
    params['mode'] = args.split
    params['return_idx'] = True
    params['return_size'] = True
    testset = getattr(datasets, config.dataset)(**params)
    loader = torch.utils.data.DataLoader(testset, batch_size=1, shuffle=False,
                                         num_workers=4, pin_memory=True)

    os.makedirs(args.out, exist_ok=True)

    starter = torch.cuda.Event(enable_timing=True)
    ender = torch.cuda.Event(enable_timing=True)
    timings = []

    for i, (rgb, lidar, idx, ori_size) in enumerate(tqdm(loader)):
        rgb = rgb.to(device, non_blocking=True)
        lidar = lidar.to(device, non_blocking=True)
        if args.fp16:
            rgb, lidar = rgb.half(), lidar.half()
        rgb, (ph, pw) = pad_to_multiple(rgb)
        lidar, _ = pad_to_multiple(lidar)

        starter.record()
        output = net(rgb, lidar)[0]
        ender.record()
        torch.cuda.synchronize()
        if i >= args.warmup:
            timings.append(starter.elapsed_time(ender))

        output = output[..., ph:, :output.shape[-1] - pw] if (ph or pw) else output
        output = output.float().squeeze().cpu().numpy()
        h, w = int(ori_size[0]), int(ori_size[1])
        if output.shape != (h, w):
            # bottom-aligned crop was used for the network input; paste back
            full = np.zeros((h, w), dtype=np.float32)
            full[h - output.shape[0]:, :] = output
            output = full
        save_depth_png(output, os.path.join(args.out, '{:010d}.png'.format(int(idx))))

    if timings:
        t = np.array(timings)
        print('runtime per frame: {:.2f} ms (median {:.2f} ms, {} frames)'.format(
            t.mean(), np.median(t), len(t)))
    print('peak memory: {:.0f} MiB on {}'.format(
        torch.cuda.max_memory_allocated(device) / 1024 ** 2, torch.cuda.get_device_name(args.gpu)))


if __name__ == '__main__':
    run(parse_args())
