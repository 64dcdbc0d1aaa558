import argparse
import math
import numpy as np
import torch
from torch.utils.data import DataLoader

from basicsr.data import build_dataset
from basicsr.metrics.fid import (calculate_fid, extract_inception_features, feature_statistics,
                                 feature_statistics_torch, load_patched_inception_v3)


def calculate_fid_folder():
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

    parser = argparse.ArgumentParser()
    parser.add_argument('folder', type=str, help='Path to the folder.')
    parser.add_argument('--fid_stats', type=str, help='Path to the dataset fid statistics.')
    parser.add_argument('--batch_size', type=int, default=64)
    parser.add_argument('--num_sample', type=int, default=50000)
    parser.add_argument('--num_workers', type=int, default=4)
    parser.add_argument('--backend', type=str, default='disk', help='io backend for dataset. Option: disk, lmdb')
    parser.add_argument('--stats_on_gpu', action='store_true', help='compute mean/cov on the GPU in float64')
    args = parser.parse_args()

    # inception model
    inception = load_patched_inception_v3(device)

    # create dataset
    opt = {}
    opt['name'] = 'SingleImageDataset'
    opt['type'] = 'SingleImageDataset'
    opt['dataroot_lq'] = args.folder
    opt['io_backend'] = dict(type=args.backend)
    opt['mean'] = [0.5, 0.5, 0.5]
    opt['std'] = [0.5, 0.5, 0.5]
    dataset = build_dataset(opt)

    # create dataloader
    data_loader = DataLoader(
        dataset=dataset,
        batch_size=args.batch_size,
        shuffle=False,
        num_workers=args.num_workers,
        sampler=None,
        drop_last=False,
        pin_memory=True)
    args.num_sample = min(args.num_sample, len(dataset))
    total_batch = math.ceil(args.num_sample / args.batch_size)

    def data_generator(data_loader, total_batch):
        for idx, data in enumerate(data_loader):
            if idx >= total_batch:
                break
            else:
                yield data['lq']

    features = extract_inception_features(data_generator(data_loader, total_batch), inception, total_batch, device)
    features = features[:args.num_sample]
    print(f'Extracted {len(features)} features, use the first {args.num_sample} features to calculate stats.')

    if args.stats_on_gpu:
        sample_mean, sample_cov = feature_statistics_torch(features, device)
    else:
        sample_mean, sample_cov = feature_statistics(features)

    # load the dataset stats
    stats = torch.load(args.fid_stats)
    real_mean = stats['mean']
    real_cov = stats['cov']

    # calculate FID metric
    fid = calculate_fid(sample_mean, sample_cov, real_mean, real_cov)
    print('fid:', fid)

    if torch.cuda.is_available():
        print(f'max memory: {torch.cuda.max_memory_allocated(device) / 1024**3:.2f} GiB')
    print(f'inception params: {sum(p.numel() for p in inception.parameters()) / 1e6:.1f}M')
    print(f'first feature norm: {np.linalg.norm(features[0].numpy()):.4f}')


if __name__ == '__main__':
    calculate_fid_folder()
