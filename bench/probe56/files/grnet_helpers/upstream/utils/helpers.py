# -*- coding: utf-8 -*-
# @Author: Haozhe Xie
# @Date:   2019-07-31 16:57:15
# @Last Modified by:   Haozhe Xie
# @Last Modified time: 2020-02-22 18:34:19
# @Email:  cshzxie@gmail.com

import logging
import matplotlib.pyplot as plt
import numpy as np
import torch

from mpl_toolkits.mplot3d import Axes3D


def var_or_cuda(x):
    if torch.cuda.is_available():
        x = x.cuda(non_blocking=True)

    return x


def init_weights(m):
    if type(m) == torch.nn.Conv2d or type(m) == torch.nn.ConvTranspose2d or \
       type(m) == torch.nn.Conv3d or type(m) == torch.nn.ConvTranspose3d:
        torch.nn.init.kaiming_normal_(m.weight)
        if m.bias is not None:
            torch.nn.init.constant_(m.bias, 0)
    elif type(m) == torch.nn.BatchNorm2d or type(m) == torch.nn.BatchNorm3d:
        torch.nn.init.constant_(m.weight, 1)
        torch.nn.init.constant_(m.bias, 0)
    elif type(m) == torch.nn.Linear:
        torch.nn.init.normal_(m.weight, 0, 0.01)
        torch.nn.init.constant_(m.bias, 0)


def count_parameters(network):
    return sum(p.numel() for p in network.parameters())


def get_ptcloud_img(ptcloud):
    fig = plt.figure(figsize=(8, 8))

    x, z, y = ptcloud.transpose(1, 0)
    ax = fig.gca(projection=Axes3D.name, adjustable='box')
    ax.axis('off')
    ax.axis('scaled')
    ax.view_init(30, 45)

    max, min = np.max(ptcloud), np.min(ptcloud)
    ax.set_xbound(min, max)
    ax.set_ybound(min, max)
    ax.set_zbound(min, max)
    ax.scatter(x, y, z, zdir='z', c=x, cmap='jet')

    fig.canvas.draw()
    img = np.fromstring(fig.canvas.tostring_rgb(), dtype=np.uint8, sep='')
    img = img.reshape(fig.canvas.get_width_height()[::-1] + (3, ))
    return img


def load_checkpoint(network, checkpoint_path, optimizers=None):
    """Load a GRNet checkpoint saved by core/train.py.

    Checkpoints written by DataParallel carry a `module.` prefix; strip it when the
    network is not wrapped.
    """
    logging.info('Recovering from %s ...' % checkpoint_path)
    checkpoint = torch.load(checkpoint_path, map_location=lambda storage, loc: storage)
    state_dict = checkpoint['grnet']
    if not isinstance(network, torch.nn.DataParallel):
        state_dict = {k[7:] if k.startswith('module.') else k: v for k, v in state_dict.items()}
    network.load_state_dict(state_dict)
    if optimizers is not None:
        for name, optimizer in optimizers.items():
            if name in checkpoint:
                optimizer.load_state_dict(checkpoint[name])
    logging.info('Recover complete. Current epoch = #%d; best metrics = %s.' %
                 (checkpoint['epoch_index'], checkpoint['best_metrics']))
    return checkpoint['epoch_index'], checkpoint['best_metrics']


def log_device_info():
    if not torch.cuda.is_available():
        logging.info('Running on CPU')
        return
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        logging.info('GPU %d: %s, %.1f GiB, sm_%d%d' % (i, props.name, props.total_memory / 2**30,
                                                          props.major, props.minor))
