from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import os
import torch

from lib.net.scg_gcn import *


def load_model(name='MSCG-Rx50', classes=7, node_size=(32, 32)):
    if name == 'MSCG-Rx50':
        net = rx50_gcn_3head_4channel(out_channels=classes)
    elif name == 'MSCG-Rx101':
        net = rx101_gcn_3head_4channel(out_channels=classes)
    else:
        print('not found the net')
        return -1

    return net


def get_net(ckpt_path, name='MSCG-Rx50', classes=7, node_size=(32, 32)):
    """Builds a network and loads a snapshot for inference.

    Snapshots are written by `tools/train_*.py` with `torch.save(net.state_dict())`
    from a single-GPU process, so keys carry no `module.` prefix.
    """
    net = load_model(name=name, classes=classes, node_size=node_size)
    state = torch.load(ckpt_path, map_location=torch.device('cpu'))
    if isinstance(state, dict) and 'state_dict' in state:
        state = state['state_dict']
    state = {k.replace('module.', ''): v for k, v in state.items()}
    net.load_state_dict(state)
    print('load the model: {}'.format(os.path.basename(ckpt_path)))
    net.eval()
    return net
