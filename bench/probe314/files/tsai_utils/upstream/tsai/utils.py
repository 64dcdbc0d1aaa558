"""General helper functions used across tsai (array/tensor conversion, seeds, memory, devices)."""

__all__ = ['my_setup', 'totensor', 'toarray', 'toL', 'to3dtensor', 'to2dtensor', 'to1dtensor', 'to3darray',
           'to2darray', 'to1darray', 'to3d', 'to2d', 'to1d', 'to2dPlus', 'to3dPlus', 'bytes2str', 'get_size',
           'is_array', 'is_tensor', 'random_seed', 'get_device', 'to_device', 'gpu_info', 'cuda_mem_usage',
           'reset_peak_memory', 'stack', 'stack_pad', 'pad_sequences', 'cat2int', 'cycle_dl', 'cycle_dl_to_device',
           'cycle_dl_estimate', 'memmap2cache', 'cache_memmap', 'get_func_defaults', 'get_idx_from_df_col_vals',
           'sort_generator', 'get_subset_dict', 'create_dir', 'remove_dir', 'named_partial', 'dict2attrdict']

import os
import gc
import random
import shutil
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from fastcore.basics import ifnone, listify
from fastai.torch_core import default_device, to_device as _fa_to_device
from fastai.data.core import DataLoaders


def my_setup(*pkgs):
    warnings.filterwarnings("ignore")
    from .imports import computer_setup
    computer_setup(*pkgs)


def totensor(o):
    if isinstance(o, torch.Tensor):
        return o
    elif isinstance(o, np.ndarray):
        return torch.from_numpy(o)
    elif isinstance(o, (list, tuple)):
        return torch.tensor(o)
    else:
        try:
            return torch.tensor(o)
        except Exception:
            warnings.warn(f"Can't convert {type(o)} to torch.Tensor", Warning)


def toarray(o):
    if isinstance(o, np.ndarray):
        return o
    elif isinstance(o, torch.Tensor):
        return o.detach().cpu().numpy()
    elif isinstance(o, (list, tuple)):
        return np.asarray(o)
    else:
        try:
            return np.asarray(o)
        except Exception:
            warnings.warn(f"Can't convert {type(o)} to np.array", Warning)


def toL(o):
    if isinstance(o, (np.ndarray, torch.Tensor)):
        return list(o.tolist())
    return listify(o)


def to3dtensor(o):
    o = totensor(o)
    if o.ndim == 3:
        return o
    elif o.ndim == 1:
        return o[None, None]
    elif o.ndim == 2:
        return o[:, None]
    assert False, f'Please, review input dimensions {o.ndim}'


def to2dtensor(o):
    o = totensor(o)
    if o.ndim == 2:
        return o
    elif o.ndim == 1:
        return o[None]
    elif o.ndim == 3:
        return o[0]
    assert False, f'Please, review input dimensions {o.ndim}'


def to1dtensor(o):
    o = totensor(o)
    if o.ndim == 1:
        return o
    elif o.ndim == 3:
        return o[0, 0]
    if o.ndim == 2:
        return o[0]
    assert False, f'Please, review input dimensions {o.ndim}'


def to3darray(o):
    o = toarray(o)
    if o.ndim == 3:
        return o
    elif o.ndim == 1:
        return o[None, None]
    elif o.ndim == 2:
        return o[:, None]
    assert False, f'Please, review input dimensions {o.ndim}'


def to2darray(o):
    o = toarray(o)
    if o.ndim == 2:
        return o
    elif o.ndim == 1:
        return o[None]
    elif o.ndim == 3:
        return o[0]
    assert False, f'Please, review input dimensions {o.ndim}'


def to1darray(o):
    o = toarray(o)
    if o.ndim == 1:
        return o
    elif o.ndim == 3:
        o = o[0, 0]
    elif o.ndim == 2:
        o = o[0]
    assert False, f'Please, review input dimensions {o.ndim}'


def to3d(o):
    if o.ndim == 3:
        return o
    if isinstance(o, (np.ndarray, np.memmap)):
        return to3darray(o)
    if isinstance(o, torch.Tensor):
        return to3dtensor(o)


def to2d(o):
    if o.ndim == 2:
        return o
    if isinstance(o, np.ndarray):
        return to2darray(o)
    if isinstance(o, torch.Tensor):
        return to2dtensor(o)


def to1d(o):
    if o.ndim == 1:
        return o
    if isinstance(o, np.ndarray):
        return to1darray(o)
    if isinstance(o, torch.Tensor):
        return to1dtensor(o)


def to2dPlus(o):
    if o.ndim >= 2:
        return o
    if isinstance(o, np.ndarray):
        return to2darray(o)
    elif isinstance(o, torch.Tensor):
        return to2dtensor(o)


def to3dPlus(o):
    if o.ndim >= 3:
        return o
    if isinstance(o, np.ndarray):
        return to3darray(o)
    elif isinstance(o, torch.Tensor):
        return to3dtensor(o)


def bytes2str(size_bytes: int, decimals=2):
    if size_bytes == 0:
        return "0B"
    size_name = ("B", "KB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB")
    i = int(np.floor(np.log(size_bytes) / np.log(1024)))
    p = np.power(1024, i)
    s = round(size_bytes / p, decimals)
    return f"{s} {size_name[i]}"


def get_size(o, return_str=False, decimals=2):
    import sys
    if hasattr(o, "base") and o.base is not None:
        s = sys.getsizeof(o.base)
    elif isinstance(o, torch.Tensor):
        s = o.element_size() * o.nelement()
    else:
        s = sys.getsizeof(o)
    if return_str:
        return bytes2str(s, decimals=decimals)
    return s


def is_array(o):
    return isinstance(o, np.ndarray)


def is_tensor(o):
    return isinstance(o, torch.Tensor)


def random_seed(seed_value, use_cuda=True):
    "Sets the seed of numpy, python's random and torch (incl. all GPUs) for reproducibility"
    np.random.seed(seed_value)
    random.seed(seed_value)
    os.environ['PYTHONHASHSEED'] = str(seed_value)
    torch.manual_seed(seed_value)
    if use_cuda:
        torch.cuda.manual_seed(seed_value)
        torch.cuda.manual_seed_all(seed_value)
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def get_device(use_cuda=None, device_id=None):
    "Returns the device tsai will use. `use_cuda=None` means: GPU if one is available"
    use_cuda = ifnone(use_cuda, torch.cuda.is_available())
    if not use_cuda:
        return torch.device('cpu')
    device_id = ifnone(device_id, torch.cuda.current_device())
    return torch.device(f'cuda:{device_id}')


def to_device(b, device=None, non_blocking=False):
    "Recursively puts `b` on `device` (defaults to `get_device()`)."
    device = ifnone(device, get_device())
    return _fa_to_device(b, device=device, non_blocking=non_blocking)


def gpu_info():
    "Name and total memory of every visible GPU"
    out = []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        out.append(f"{i}: {props.name} | {props.total_memory / 1024**3:.1f} GB | sm_{props.major}{props.minor}")
    return out


def cuda_mem_usage(device=None, reset=False):
    "Returns (allocated, peak) memory in GB for `device`"
    alloc = torch.cuda.memory_allocated(device) / 1024**3
    peak = torch.cuda.max_memory_allocated(device) / 1024**3
    if reset:
        reset_peak_memory(device)
    return round(alloc, 3), round(peak, 3)


def reset_peak_memory(device=None):
    gc.collect()
    torch.cuda.reset_peak_memory_stats(device)


def stack(o, axis=0, retain=True):
    if hasattr(o, '__array__'):
        return o
    if isinstance(o[0], torch.Tensor):
        return torch.stack(tuple(o), dim=axis)
    return np.stack(o, axis)


def stack_pad(o, padding_value=np.nan):
    "Converts a an iterable into a numpy array using padding if necessary"
    row_length = len(max(o, key=len))
    result = np.full((len(o), row_length), padding_value)
    for i, row in enumerate(o):
        result[i, :len(row)] = row
    return result


def pad_sequences(o, maxlen=None, dtype=np.float64, padding='pre', truncating='pre', padding_value=np.nan):
    "Transforms an iterable with sequences into a 3d numpy array using padding or truncating sequences if necessary"
    assert padding in ['pre', 'post']
    assert truncating in ['pre', 'post']
    assert maxlen is None or isinstance(maxlen, int)
    if hasattr(o, '__array__') and o.ndim == 3 and maxlen is None:
        return o.astype(dtype)
    o = [to2d(oi) for oi in o]
    n_vars = o[0].shape[-2]
    if maxlen is None:
        maxlen = max(oi.shape[-1] for oi in o)
    out = np.full((len(o), n_vars, maxlen), padding_value, dtype=dtype)
    for i, oi in enumerate(o):
        oi = toarray(oi)
        if truncating == 'pre':
            oi = oi[..., -maxlen:]
        else:
            oi = oi[..., :maxlen]
        if padding == 'pre':
            out[i, :, -oi.shape[-1]:] = oi
        else:
            out[i, :, :oi.shape[-1]] = oi
    return out


def cat2int(o):
    from sklearn.preprocessing import LabelEncoder
    le = LabelEncoder()
    return le.fit_transform(o)


def cycle_dl(dl, show_progress_bar=True):
    from fastprogress import progress_bar
    try:
        if show_progress_bar:
            for _ in progress_bar(dl):
                _
        else:
            for _ in dl:
                _
    except KeyboardInterrupt:
        pass


def cycle_dl_to_device(dl, show_progress_bar=True):
    "Iterates once over `dl` moving every batch to the GPU (useful to time data loading + transfer)"
    from fastprogress import progress_bar
    try:
        if show_progress_bar:
            for bs in progress_bar(dl):
                [b.cuda(non_blocking=True) for b in bs]
        else:
            for bs in dl:
                _ = [b.cuda(non_blocking=True) for b in bs]
    except KeyboardInterrupt:
        pass


def cycle_dl_estimate(dl, iters=10):
    import time
    iters = min(iters, len(dl))
    iterator = iter(dl)
    timer_start = time.time()
    try:
        for _ in range(iters):
            next(iterator)
    except KeyboardInterrupt:
        pass
    t = (time.time() - timer_start) / iters
    return t * len(dl)


def cache_data(o, slice_len=10_000, verbose=False):
    start = 0
    n_loops = (len(o) - 1) // slice_len + 1
    for i in range(n_loops):
        o[slice(start, start + slice_len)]
        start += slice_len


memmap2cache = cache_data
cache_memmap = cache_data


def get_func_defaults(f):
    import inspect
    fa = inspect.getfullargspec(f)
    if fa.defaults is None:
        return dict(zip(fa.args, [''] * (len(fa.args))))
    else:
        return dict(zip(fa.args, [''] * (len(fa.args) - len(fa.defaults)) + list(fa.defaults)))


def get_idx_from_df_col_vals(df, col, val_list):
    return [df[df[col] == val].index[0] for val in val_list]


def sort_generator(generator, bs):
    g = list(generator)
    for i in range(len(g) // bs + 1):
        g[bs * i:bs * (i + 1)] = np.sort(g[bs * i:bs * (i + 1)])
    return g


def get_subset_dict(d, keys):
    return dict((k, d[k]) for k in listify(keys) if k in d)


def create_dir(directory, verbose=True):
    if not isinstance(directory, Path):
        directory = Path(directory)
    if directory.exists():
        if verbose:
            print(f"{directory} directory already exists.")
    else:
        directory.mkdir(parents=True, exist_ok=True)
        if verbose:
            print(f"{directory} directory created.")


def remove_dir(directory, verbose=True):
    if not isinstance(directory, Path):
        directory = Path(directory)
    if directory.exists():
        shutil.rmtree(directory)
        if verbose:
            print(f"{directory} directory removed.")


def named_partial(name, func, *args, **kwargs):
    fn = partial(func, *args, **kwargs)
    fn.__name__ = name
    return fn


class dict2attrdict(dict):
    "Converts a dict to an object whose keys are also attributes"
    def __getattr__(self, k):
        return self[k]

    def __setattr__(self, k, v):
        self[k] = v
