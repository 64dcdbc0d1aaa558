"""
Classify every pixel of a scene with a trained HybridSN checkpoint and save the map.

    python predict_map.py --dataset IP --ckpt checkpoints/hybridsn_IP.pth
"""
import argparse
import os

import numpy as np
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
import spectral
import torch

from HybridSN import HybridSN, load_data, apply_pca, pad_with_zeros


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument('--dataset', default='IP')
    p.add_argument('--data_dir', default='./data')
    p.add_argument('--ckpt', required=True)
    p.add_argument('--rows_per_batch', type=int, default=4,
                   help='image rows classified per forward pass (lower it if the GPU runs out of memory)')
    p.add_argument('--out', default='./maps')
    return p.parse_args()


def row_patches(padded, r, width, window):
    margin = window // 2
    patches = np.empty((width, window, window, padded.shape[2]), dtype=np.float32)
    for c in range(width):
        patches[c] = padded[r:r + window, c:c + window, :]
    # N x 1 x bands x H x W
    return torch.from_numpy(patches.transpose(0, 3, 1, 2)[:, None].copy())


def main():
    args = parse_args()
    # checkpoints are written from the training card; keep them there
    ckpt = torch.load(args.ckpt, map_location='cuda:0')
    window = ckpt['window']
    n_comp = ckpt['pca_components']

    X, y = load_data(args.dataset, args.data_dir)
    height, width = y.shape
    X, _ = apply_pca(X, num_components=n_comp)
    padded = pad_with_zeros(X, margin=window // 2)

    net = HybridSN(bands=n_comp, window=window, num_classes=ckpt['num_classes'])
    net.load_state_dict(ckpt['model'])
    net = net.to('cuda:0').eval()

    outputs = np.zeros((height, width), dtype=np.int64)
    with torch.no_grad():
        for r0 in range(0, height, args.rows_per_batch):
            rows = range(r0, min(height, r0 + args.rows_per_batch))
            batch = torch.cat([row_patches(padded, r, width, window) for r in rows])
            logits = net(batch.to('cuda:0', non_blocking=True))
            pred = logits.argmax(1).cpu().numpy().reshape(len(rows), width)
            outputs[r0:r0 + len(rows)] = pred + 1
            if r0 % 20 == 0:
                print('row %d / %d' % (r0, height))

    outputs[y == 0] = 0
    os.makedirs(args.out, exist_ok=True)
    np.save(os.path.join(args.out, 'pred_%s.npy' % args.dataset), outputs)
    view = spectral.imshow(classes=outputs.astype(int), figsize=(7, 7))
    plt.savefig(os.path.join(args.out, 'pred_%s.png' % args.dataset), dpi=300, bbox_inches='tight')
    gt_view = spectral.imshow(classes=y, figsize=(7, 7))
    plt.savefig(os.path.join(args.out, 'gt_%s.png' % args.dataset), dpi=300, bbox_inches='tight')
    print('saved maps to', args.out)


if __name__ == '__main__':
    main()
