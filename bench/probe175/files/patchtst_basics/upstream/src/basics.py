import torch
from torch import nn
import collections
from collections import OrderedDict
import time


def get_device(use_cuda=True, device_id=None, usage=5):
    "Return or set default device; `use_cuda`: None - CUDA if available; True - error if not available; False - CPU"
    if not torch.cuda.is_available():
        use_cuda = False
    else:
        if device_id is None:
            device_ids = get_available_cuda(usage=usage)
            device_id = device_ids[0]   # get the first available device
        torch.cuda.set_device(device_id)
    return torch.device(torch.cuda.current_device()) if use_cuda else torch.device('cpu')


def set_device(usage=5):
    "set the device that has usage < default usage  "
    device_ids = get_available_cuda(usage=usage)
    torch.cuda.set_device(device_ids[0])   # get the first available device


def default_device(use_cuda=True):
    "Return or set default device; `use_cuda`: None - CUDA if available; True - error if not available; False - CPU"
    use_cuda = use_cuda and torch.cuda.is_available()
    return torch.device('cuda', torch.cuda.current_device()) if use_cuda else torch.device('cpu')


def get_available_cuda(usage=10):
    if not torch.cuda.is_available(): return
    # collect available cuda devices, only collect devices that has less that 'usage' percent
    device_ids = []
    for device in range(torch.cuda.device_count()):
        if torch.cuda.utilization(device) < usage: device_ids.append(device)
    return device_ids


def to_device(b, device=None, non_blocking=False):
    """
    Recursively put `b` on `device`
    components of b are torch tensors
    """
    if device is None:
        device = default_device(use_cuda=True)

    if isinstance(b, dict):
        return {key: to_device(val, device) for key, val in b.items()}

    if isinstance(b, (list, tuple)):
        return type(b)(to_device(o, device) for o in b)

    return b.to(device, non_blocking=non_blocking)


def to_numpy(b):
    """
    Components of b are torch tensors
    """
    if isinstance(b, dict):
        return {key: to_numpy(val) for key, val in b.items()}

    if isinstance(b, (list, tuple)):
        return type(b)(to_numpy(o) for o in b)

    return b.detach().cpu().numpy()


def to_tensor(b, device=None):
    """numpy / list -> float tensor (recursively), optionally moved to `device`"""
    if isinstance(b, dict):
        return {key: to_tensor(val, device) for key, val in b.items()}
    if isinstance(b, (list, tuple)):
        return type(b)(to_tensor(o, device) for o in b)
    t = torch.as_tensor(b, dtype=torch.float32)
    return t.to(device) if device is not None else t


def get_model(model, device=None):
    "model: pytorch model"
    device = device or default_device()
    if torch.cuda.device_count() > 1:
        print(f"Let's use {torch.cuda.device_count()} GPUs!")
        model = nn.DataParallel(model)
    return model.to(device)


def count_params(model, trainable_only=True):
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)


def bytes2human(n, fmt='%(value).1f%(symbol)s'):
    symbols = ('B', 'K', 'M', 'G', 'T')
    prefix = {}
    for i, s in enumerate(symbols[1:]):
        prefix[s] = 1 << (i + 1) * 10
    for symbol in reversed(symbols[1:]):
        if n >= prefix[symbol]:
            value = float(n) / prefix[symbol]
            return fmt % locals()
    return fmt % dict(symbol=symbols[0], value=n)


def gpu_memory_summary(device=None):
    """One-line memory summary used in the learner's epoch log."""
    if not torch.cuda.is_available() or not torch.cuda.is_initialized():
        return 'cpu'
    alloc = torch.cuda.memory_allocated(device)
    reserved = torch.cuda.memory_reserved(device)
    return 'alloc {} / reserved {}'.format(bytes2human(alloc), bytes2human(reserved))


class Timer:
    def start(self):
        self.start_time = time.time()

    def end(self):
        self.end_time = time.time()
        return self.end_time - self.start_time


class ValueTracker:
    "running average of scalars keyed by name (losses / metrics)"

    def __init__(self):
        self.sums = collections.defaultdict(float)
        self.counts = collections.defaultdict(int)

    def update(self, name, value, n=1):
        if torch.is_tensor(value):
            value = value.item()
        self.sums[name] += value * n
        self.counts[name] += n

    def average(self):
        return OrderedDict((k, self.sums[k] / max(self.counts[k], 1)) for k in self.sums)

    def reset(self):
        self.sums.clear()
        self.counts.clear()
