"""Misc helpers shared by train.py / evaluate.py / the notebooks."""
import logging
import os
import random
import shutil

import numpy as np
import torch
from skimage.metrics import peak_signal_noise_ratio, structural_similarity

logger = logging.getLogger("modl")


# ---------------------------------------------------------------------------
# reproducibility / device
# ---------------------------------------------------------------------------

def set_seed(seed, deterministic=False):
    """Seed python, numpy and torch (CPU and all GPUs)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False


def get_device(gpu_id=0):
    """Return the torch.device to run on.

    gpu_id < 0 forces CPU (handy for debugging the CG block on a laptop).
    """
    if gpu_id is not None and gpu_id >= 0 and torch.cuda.is_available():
        device = torch.device(f"cuda:{gpu_id}")
        logger.info("running on %s (%s)", device, torch.cuda.get_device_name(gpu_id))
    else:
        device = torch.device("cpu")
        logger.warning("CUDA not available - running MoDL on the CPU will be slow")
    return device


def gpu_mem_report(device=None):
    """One-line memory summary used in the training log."""
    if not torch.cuda.is_available():
        return "n/a"
    alloc = torch.cuda.memory_allocated(device) / 2 ** 20
    reserved = torch.cuda.memory_reserved(device) / 2 ** 20
    return f"{alloc:.0f}/{reserved:.0f} MiB"


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


# ---------------------------------------------------------------------------
# complex <-> real, normalisation
# ---------------------------------------------------------------------------

def c2r_np(complex_img, axis=0):
    """
    :input shape: row x col (complex64)
    :output shape: 2 x row x col (float32)
    """
    if isinstance(complex_img, np.ndarray):
        real_img = np.stack((complex_img.real, complex_img.imag), axis=axis)
    elif isinstance(complex_img, torch.Tensor):
        real_img = torch.stack((complex_img.real, complex_img.imag), dim=axis)
    else:
        raise NotImplementedError
    return real_img


def r2c_np(real_img, axis=0):
    """
    :input shape: 2 x row x col (float32)
    :output shape: row x col (complex64)
    """
    if axis == 0:
        complex_img = real_img[0] + 1j * real_img[1]
    elif axis == 1:
        complex_img = real_img[:, 0] + 1j * real_img[:, 1]
    else:
        raise NotImplementedError
    return complex_img


def normalize01(img):
    """normalise magnitude image to [0, 1] (per image)"""
    img = np.abs(img)
    mn, mx = img.min(), img.max()
    return (img - mn) / (mx - mn + 1e-12)


# ---------------------------------------------------------------------------
# metrics (numpy, computed on CPU)
# ---------------------------------------------------------------------------

def psnr_batch(ref, rec):
    vals = []
    for r, x in zip(ref, rec):
        r, x = normalize01(r), normalize01(x)
        vals.append(peak_signal_noise_ratio(r, x, data_range=1.0))
    return float(np.mean(vals))


def ssim_batch(ref, rec):
    vals = []
    for r, x in zip(ref, rec):
        r, x = normalize01(r), normalize01(x)
        vals.append(structural_similarity(r, x, data_range=1.0))
    return float(np.mean(vals))


class AverageMeter:
    """Computes and stores the average and current value"""

    def __init__(self, name, fmt=":f"):
        self.name = name
        self.fmt = fmt
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

    def __str__(self):
        fmtstr = "{name} {val" + self.fmt + "} ({avg" + self.fmt + "})"
        return fmtstr.format(**self.__dict__)


# ---------------------------------------------------------------------------
# checkpoints
# ---------------------------------------------------------------------------

def save_checkpoint(state, save_dir, is_best, filename="last.pth"):
    path = os.path.join(save_dir, filename)
    torch.save(state, path)
    if is_best:
        shutil.copyfile(path, os.path.join(save_dir, "best.pth"))


def load_checkpoint(path, model, optimizer=None, scheduler=None, device="cpu"):
    """Restore a checkpoint written by save_checkpoint.

    Returns (start_epoch, best_psnr).
    """
    ckpt = torch.load(path, map_location=device)
    target = model.module if hasattr(model, "module") else model
    target.load_state_dict(ckpt["model"])
    if optimizer is not None and "optimizer" in ckpt:
        optimizer.load_state_dict(ckpt["optimizer"])
    if scheduler is not None and "scheduler" in ckpt:
        scheduler.load_state_dict(ckpt["scheduler"])
    logger.info("resumed from %s (epoch %d)", path, ckpt.get("epoch", 0))
    return ckpt.get("epoch", 0), ckpt.get("best_psnr", 0.0)


def load_pretrained_tf_lambda(npz_path):
    """The TF release stores lambda as a separate scalar; read it for comparison."""
    data = np.load(npz_path)
    lam = float(data["lam"]) if "lam" in data else 0.05
    return torch.tensor(lam, dtype=torch.float32)
