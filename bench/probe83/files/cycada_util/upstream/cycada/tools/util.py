import logging
import logging.config
import os.path
from collections import OrderedDict

import numpy as np
import torch
import yaml
from torch.autograd import Variable
from tqdm import tqdm


class TqdmHandler(logging.StreamHandler):

    def __init__(self):
        logging.StreamHandler.__init__(self)

    def emit(self, record):
        msg = self.format(record)
        tqdm.write(msg)


def config_logging(logfile=None):
    path = os.path.join(os.path.dirname(__file__), 'logging.yml')
    with open(path, 'r') as f:
        config = yaml.safe_load(f.read())
    if logfile is None:
        del config['handlers']['file_handler']
        del config['root']['handlers'][-1]
    else:
        config['handlers']['file_handler']['filename'] = logfile
    logging.config.dictConfig(config)


def format_dict(d):
    s = ['']

    def helper(d, s, depth=0):
        for k, v in sorted(d.items(), key=lambda x: x[0]):
            if isinstance(v, dict):
                s[0] += ('  ' * depth) + ('%s:' % k) + '\n'
                helper(v, s, depth + 1)
            else:
                s[0] += ('  ' * depth) + ('%s: %s' % (k, v)) + '\n'
    helper(d, s)
    return s[0]


def to_tensor_raw(im):
    return torch.from_numpy(np.array(im, np.int64, copy=False))


def safe_load(net, filename):
    """Load pretrained (e.g. source-only or CycleGAN-adapted) weights, skipping
    parameters whose shape does not match the current network."""
    state_dict = torch.load(filename)
    own_state = net.state_dict()
    new_state = OrderedDict()
    for name, param in state_dict.items():
        name = name.replace('module.', '')
        if name not in own_state:
            logging.info('Skipping unexpected key %s', name)
            continue
        if own_state[name].size() != param.size():
            logging.info('Skipping %s: shape %s vs %s', name, own_state[name].size(), param.size())
            continue
        new_state[name] = param
    own_state.update(new_state)
    net.load_state_dict(own_state)
    return net


def make_variable(tensor, volatile=False, requires_grad=True):
    if torch.cuda.is_available():
        tensor = tensor.cuda()
    if volatile:
        requires_grad = False
    return Variable(tensor, requires_grad=requires_grad)


def step_lr(optimizer, mult):
    for param_group in optimizer.param_groups:
        param_group['lr'] *= mult


def norm(x):
    """Row-normalise features before computing the discrepancy."""
    return x / x.norm(dim=1, keepdim=True).clamp(min=1e-12)


def mmd_loss(f_s, f_t, sigmas=(1, 2, 4, 8, 16)):
    """Multi-kernel maximum mean discrepancy between source and target features."""
    f_s = f_s.view(f_s.size(0), -1)
    f_t = f_t.view(f_t.size(0), -1)
    x = torch.cat([f_s, f_t], dim=0)
    xx = torch.mm(x, x.t())
    sq = xx.diag().unsqueeze(0).expand_as(xx)
    dist = sq + sq.t() - 2 * xx
    k = sum(torch.exp(-dist / (2.0 * s ** 2)) for s in sigmas)
    n = f_s.size(0)
    return k[:n, :n].mean() + k[n:, n:].mean() - 2 * k[:n, n:].mean()
