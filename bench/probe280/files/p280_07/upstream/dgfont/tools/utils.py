import os
import shutil
import subprocess
import sys
import time

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter


class Logger(object):
    def __init__(self, log_dir):
        self.last = None
        self.writer = SummaryWriter(log_dir=log_dir)

    def scalar_summary(self, tag, value, step):
        self.writer.add_scalar(tag, value, step)

    def image_summary(self, tag, images, step):
        self.writer.add_images(tag, images, step)

    def histo_summary(self, tag, values, step, bins=1000):
        self.writer.add_histogram(tag, values, step, bins=bins)

    def close(self):
        self.writer.close()


def makedirs(path):
    if not os.path.exists(path):
        os.makedirs(path)


def save_checkpoint(state, check_list, log_dir, epoch=0):
    check_file = os.path.join(log_dir, 'model_{}.ckpt'.format(epoch))
    torch.save(state, check_file)
    check_list.write('model_{}.ckpt\n'.format(epoch))


def accuracy(output, target, topk=(1,)):
    """Computes the accuracy over the k top predictions for the specified values of k"""
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)

        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))

        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res


class AverageMeter(object):
    """Computes and stores the average and current value"""

    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def add_logs(args, logger, tag, value, step):
    logger.scalar_summary(tag, value, step)


def print_args(args):
    for arg in vars(args):
        print('{:35}{:20}'.format(arg, str(getattr(args, arg))))


def get_gpu_memory_map():
    """Get the current gpu usage via nvidia-smi.

    Returns
    -------
    usage: dict
        Keys are device ids as integers.
        Values are memory usage as integers in MB.
    """
    result = subprocess.check_output(
        [
            'nvidia-smi', '--query-gpu=memory.used',
            '--format=csv,nounits,noheader'
        ], encoding='utf-8')
    gpu_memory = [int(x) for x in result.strip().split('\n')]
    gpu_memory_map = dict(zip(range(len(gpu_memory)), gpu_memory))
    return gpu_memory_map


def pick_free_gpu(min_free_mb=8000):
    """Return the index (as a string, for CUDA_VISIBLE_DEVICES) of the least used GPU."""
    try:
        usage = get_gpu_memory_map()
    except (OSError, subprocess.CalledProcessError):
        return '0'
    total = torch.cuda.get_device_properties(0).total_memory // (1024 * 1024)
    best = min(usage, key=usage.get)
    if total - usage[best] < min_free_mb:
        print('Warning: GPU {} has only {} MB free'.format(best, total - usage[best]))
    return str(best)


def make_grid_np(imgs, nrow=8, pad=2):
    """numpy version of torchvision.utils.make_grid for quick dumps (N, H, W, C) uint8."""
    n, h, w, c = imgs.shape
    ncol = int(np.ceil(n / float(nrow)))
    grid = np.full((ncol * (h + pad) + pad, nrow * (w + pad) + pad, c), 255, dtype=np.uint8)
    for idx in range(n):
        r, cc = idx // nrow, idx % nrow
        y = pad + r * (h + pad)
        x = pad + cc * (w + pad)
        grid[y:y + h, x:x + w] = imgs[idx]
    return grid


def tensor2img(t):
    """[-1, 1] CHW float tensor (any device) -> HWC uint8 numpy."""
    t = t.detach().float().cpu().clamp_(-1, 1)
    t = (t + 1.0) * 127.5
    return t.permute(1, 2, 0).numpy().astype(np.uint8)


class Timer(object):
    def __init__(self, cuda_sync=True):
        self.cuda_sync = cuda_sync
        self.start = None

    def __enter__(self):
        if self.cuda_sync:
            torch.cuda.synchronize()
        self.start = time.time()
        return self

    def __exit__(self, *exc):
        if self.cuda_sync:
            torch.cuda.synchronize()  # wait for queued kernels before reading the clock
        self.elapsed = time.time() - self.start
        return False


def copy_code(src_dir, dst_dir, exts=('.py', '.sh', '.yaml')):
    makedirs(dst_dir)
    for root, _, files in os.walk(src_dir):
        if any(p in root for p in ('logs', 'results', '.git')):
            continue
        for f in files:
            if f.endswith(exts):
                rel = os.path.relpath(os.path.join(root, f), src_dir)
                makedirs(os.path.dirname(os.path.join(dst_dir, rel)))
                shutil.copy(os.path.join(root, f), os.path.join(dst_dir, rel))


def env_summary():
    lines = ['python {}'.format(sys.version.split()[0]), 'torch {}'.format(torch.__version__)]
    if torch.cuda.is_available():
        lines.append('cuda {} / cudnn {}'.format(torch.version.cuda, torch.backends.cudnn.version()))
        for i in range(torch.cuda.device_count()):
            lines.append('  [{}] {}'.format(i, torch.cuda.get_device_name(i)))
    else:
        lines.append('no GPU found, running on CPU')
    return '\n'.join(lines)
