"""Code required for inference with a trained tsai Learner (load_learner_all, get_X_preds)."""

__all__ = ['load_all', 'load_learner_all', 'get_X_preds', 'get_model_preds', 'benchmark_inference']

import time
import warnings
from pathlib import Path

import numpy as np
import torch
from fastcore.basics import ifnone, patch
from fastai.learner import Learner, load_learner
from fastai.torch_core import default_device, to_detach, tensor

from .utils import to3d, toarray


def load_all(path='export', dls_fname='dls', model_fname='model', learner_fname='learner', device=None,
             pickle_module=None, verbose=False):
    "Loads dataloaders, model and learner previously saved with learn.save_all"
    if isinstance(device, int):
        device = torch.device('cuda', device)
    elif device is None:
        device = default_device()
    if device == 'cpu':
        cpu = True
    else:
        cpu = None

    path = Path(path)
    learn = load_learner(path / f'{learner_fname}.pkl', cpu=cpu, pickle_module=pickle_module)
    learn.load(f'{model_fname}', with_opt=True, device=device)

    if verbose:
        print(f'Learner loaded:')
        print(f"path          = '{path}'")
        print(f"dls_fname     = '{dls_fname}_0.pth'")
        print(f"model_fname   = '{model_fname}.pth'")
        print(f"learner_fname = '{learner_fname}.pkl'")
    return learn


load_learner_all = load_all


@patch
def get_X_preds(self: Learner, X, y=None, bs=64, with_input=False, with_decoded=True, with_loss=False, act=None):
    "Predicts on X (np.ndarray or tensor) using the learner's validation transforms"
    if with_loss and y is None:
        print("cannot find loss as y=None")
        with_loss = False
    dl = self.dls.valid.new_dl(X, y=y)
    dl.bs = ifnone(bs, dl.bs)
    output = list(self.get_preds(dl=dl, with_input=with_input, with_decoded=with_decoded, with_loss=with_loss,
                                 reorder=False, act=act))
    if with_decoded and len(self.dls.tls) >= 2 and hasattr(self.dls.tls[-1], "tfms") and \
            hasattr(self.dls.tls[-1].tfms, "decodes"):
        output[2 + with_input] = self.dls.tls[-1].tfms.decode(output[2 + with_input])
    return tuple(output)


def get_model_preds(model, X, bs=256, device=None, to_numpy=True, half=False):
    """Plain PyTorch inference loop (no fastai transforms), used when the model is exported with
    torch.save(learn.model) and served without the Learner."""
    device = ifnone(device, 'cuda' if torch.cuda.is_available() else 'cpu')
    model = model.to(device).eval()
    if half:
        model = model.half()
    X = to3d(X)
    preds = []
    with torch.inference_mode():
        for i in range(0, len(X), bs):
            xb = torch.as_tensor(X[i:i + bs], dtype=torch.float16 if half else torch.float32)
            xb = xb.to(device, non_blocking=True)
            out = model(xb)
            preds.append(out.float().softmax(-1).cpu())
    preds = torch.cat(preds)
    return preds.numpy() if to_numpy else preds


def benchmark_inference(model, X, bs=256, n_iters=20, warmup=3):
    "Measures the average latency (ms) of a forward pass of `bs` samples on the GPU"
    model = model.cuda().eval()
    xb = torch.as_tensor(toarray(X[:bs]), dtype=torch.float32).cuda()
    with torch.no_grad():
        for _ in range(warmup):
            model(xb)
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(n_iters):
            model(xb)
        end.record()
        torch.cuda.synchronize()  # wait for the queued kernels before reading the events
    ms = start.elapsed_time(end) / n_iters
    print(f'batch size {bs}: {ms:.2f} ms/batch | {bs / ms * 1000:.0f} samples/s')
    return ms
