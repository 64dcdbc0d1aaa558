# Copyright 2022 CircuitNet. All rights reserved.

from __future__ import print_function

import os
import os.path as osp
import json
import numpy as np
import time

from tqdm import tqdm

from datasets.build_dataset import build_dataset
from utils.metrics import build_metric, build_roc_prc_metric
from models.build_model import build_model
from utils.configs import Parser

import torch


def load_pretrained(model, path, strict=True):
    """Load weights released with CircuitNet (trained on 4x V100).

    The released checkpoints hold a dict with a 'state_dict' entry; older
    ones were saved from an nn.DataParallel wrapper and carry 'module.' prefixes.
    """
    checkpoint = torch.load(path)
    state_dict = checkpoint.get('state_dict', checkpoint)
    new_state_dict = {}
    for k, v in state_dict.items():
        if k.startswith('module.'):
            k = k[7:]
        new_state_dict[k] = v
    missing, unexpected = model.load_state_dict(new_state_dict, strict=strict), None
    print('loaded pretrained weights from {}'.format(path))
    return model


def test():
    argp = Parser()
    arg = argp.parser.parse_args()
    arg_dict = vars(arg)
    if arg.arg_file is not None:
        with open(arg.arg_file, 'rt') as f:
            arg_dict.update(json.load(f))
    arg_dict['ann_file'] = arg_dict['ann_file_test']
    arg_dict['test_mode'] = True

    print('===> Loading datasets')
    # Initialize dataset
    dataset = build_dataset(arg_dict)

    print('===> Building model')
    # Initialize model parameters
    model = build_model(arg_dict)
    if arg_dict['pretrained'] is not None:
        model = load_pretrained(model, arg_dict['pretrained'])
    if not arg_dict['cpu']:
        model = model.cuda()
    model.eval()

    # Build metrics
    metrics = {k: build_metric(k) for k in arg_dict['eval_metric']}
    avg_metrics = {k: 0 for k in arg_dict['eval_metric']}

    count = 0
    total_time = 0.0
    with tqdm(total=len(dataset)) as bar:
        for feature, label, label_path in dataset:
            if arg_dict['cpu']:
                input, target = feature, label
            else:
                input, target = feature.cuda(), label.cuda()

            start = time.time()
            with torch.no_grad():
                prediction = model(input)
            if not arg_dict['cpu']:
                torch.cuda.synchronize()
            total_time += time.time() - start

            for metric, metric_func in metrics.items():
                if not metric_func(target.cpu(), prediction.squeeze(1).cpu()) == 1:
                    avg_metrics[metric] += metric_func(target.cpu(), prediction.squeeze(1).cpu())

            if arg_dict['plot_roc']:
                save_path = osp.join(arg_dict['save_path'], 'test_result')
                if not os.path.exists(save_path):
                    os.makedirs(save_path)
                file_name = osp.splitext(osp.basename(label_path[0]))[0]
                save_path = osp.join(save_path, f'{file_name}.npy')
                output_final = prediction.float().detach().cpu().numpy()
                np.save(save_path, output_final)
                count += 1

            bar.update(1)

    for metric, avg_metric in avg_metrics.items():
        print("===> Avg. {}: {:.4f}".format(metric, avg_metric / len(dataset)))
    print("===> Avg. inference time per sample: {:.2f} ms".format(total_time / max(len(dataset), 1) * 1000))

    # eval roc&prc
    if arg_dict['plot_roc']:
        roc_metric, _ = build_roc_prc_metric(**arg_dict)
        print("\n===> AUC of ROC. {:.4f}".format(roc_metric))


if __name__ == "__main__":
    test()
