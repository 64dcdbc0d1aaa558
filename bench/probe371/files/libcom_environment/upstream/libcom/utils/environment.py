import os
import random
import numpy as np
import torch


def check_gpu_device(device):
    """Normalise the ``device`` argument accepted by every libcom model.

    ``device`` may be an int/str GPU index (e.g. ``0`` or ``'1'``) or a ``torch.device``.
    libcom models only run on GPU.
    """
    assert torch.cuda.is_available(), 'Only GPU are supported'
    if isinstance(device, (int, str)):
        device = int(device)
        assert 0 <= device < torch.cuda.device_count(), f'invalid device id: {device}'
        device = torch.device(f'cuda:{device}')
    if isinstance(device, torch.device):
        return device
    raise Exception('invalid device type: type({})={}'.format(device, type(device)))


def set_random_seed(seed=0, deterministic=False):
    """Set random seed for python, numpy and torch.

    Args:
        seed (int): Seed to be used.
        deterministic (bool): Whether to set the deterministic option for
            CUDNN backend, i.e., set `torch.backends.cudnn.deterministic`
            to True and `torch.backends.cudnn.benchmark` to False.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    os.environ['PYTHONHASHSEED'] = str(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def get_device_info(device):
    """Return a short human-readable description of the device (used in model __repr__)."""
    props = torch.cuda.get_device_properties(device)
    return '{} ({:.1f} GB, sm_{}{})'.format(props.name, props.total_memory / 1024 ** 3, props.major, props.minor)
