import os
import time
import argparse
import importlib
import numpy as np
from tqdm import tqdm, trange
from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F

from lib.config import config, update_config
from lib import dataset
from eval_depth import eval_metric


if __name__ == '__main__':

    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument('--cfg', required=True)
    parser.add_argument('--pth', required=True)
    parser.add_argument('--out')
    parser.add_argument('--vis_dir')
    parser.add_argument('--clip', default=10, type=float)
    parser.add_argument('--y', action='store_true')
    parser.add_argument('--pano_h', default=512, type=int)
    parser.add_argument('opts',
                        help='Modify config options using the command-line',
                        default=None, nargs=argparse.REMAINDER)
    args = parser.parse_args()
    update_config(config, args)
    device = 'cuda' if config.cuda else 'cpu'

    if config.cuda and config.cuda_benchmark:
        torch.backends.cudnn.benchmark = False

    # Init dataset
    DatasetClass = getattr(dataset, config.dataset.name)
    config.dataset.valid_kwargs.update(config.dataset.common_kwargs)
    config.dataset.valid_kwargs['fix_0th'] = False
    valid_dataset = DatasetClass(**config.dataset.valid_kwargs)

    # Init network
    model_file = importlib.import_module(config.model.file)
    model_class = getattr(model_file, config.model.modelclass)
    net = model_class(**config.model.kwargs)
    net.load_state_dict(torch.load(args.pth, map_location=device))
    net = net.eval().to(device)

    # Run evaluation
    evaluation_metric = Counter()
    times = []
    for batch in tqdm(valid_dataset):
        # Add batch dim and move to gpu
        color = batch['x'][None].to(device)
        depth = batch['depth'][None].to(device)
        mask = (depth > 0)

        # feed forward
        with torch.no_grad():
            torch.cuda.synchronize()
            tic = time.perf_counter()
            pred_depth = net.infer(color)
            torch.cuda.synchronize(device)
            times.append(time.perf_counter() - tic)
            if not torch.is_tensor(pred_depth):
                pred_depth = pred_depth.pop('depth')
            if args.clip > 0:
                pred_depth = pred_depth.clamp(max=args.clip)

        # Visualize
        if args.vis_dir:
            import matplotlib.pyplot as plt
            from imageio import imwrite
            os.makedirs(args.vis_dir, exist_ok=True)
            cmap = plt.get_cmap('inferno_r')
            fname = batch['fname'].strip()
            vis_arr = pred_depth[0, 0].cpu().numpy()
            vis_arr = (cmap(np.clip(vis_arr / 10, 0, 1))[..., :3] * 255).astype(np.uint8)
            imwrite(os.path.join(args.vis_dir, fname + '.depth.png'), vis_arr)

        # Log
        evaluation_metric['N'] += 1
        for metric, v in eval_metric(pred_depth[mask], depth[mask]).items():
            evaluation_metric[metric] += v.item()

    N = evaluation_metric.pop('N')
    for metric, total in evaluation_metric.items():
        print('{:20s} {:.4f}'.format(metric, total / N))
    print('Average FPS: %.2f (%d frames)' % (1 / np.mean(times[10:]), len(times)))
    print('Peak memory: %.1f MB' % (torch.cuda.max_memory_allocated() / 1024 ** 2))

    if args.out:
        with open(args.out, 'w') as f:
            for metric, total in evaluation_metric.items():
                f.write('{} {:.6f}\n'.format(metric, total / N))
