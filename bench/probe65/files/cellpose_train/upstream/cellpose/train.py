import time
import os
import logging
from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm import trange

from . import io, utils, models, transforms, dynamics
from .io import logger_setup

train_logger = logging.getLogger(__name__)


def _loss_fn_seg(lbl, y, device):
    """Loss function between true labels lbl and prediction y (flows: MSE, cell probability: BCE)."""
    criterion = nn.MSELoss(reduction="mean")
    criterion2 = nn.BCEWithLogitsLoss(reduction="mean")
    veci = 5. * torch.from_numpy(lbl[:, 1:]).to(device)
    loss = criterion(y[:, :2], veci)
    loss /= 2.
    loss2 = criterion2(y[:, -1], torch.from_numpy(lbl[:, 0] > 0.5).to(device).float())
    loss = loss + loss2
    return loss


def _get_batch(inds, data=None, labels=None, files=None, labels_files=None, channels=None,
               channel_axis=None, normalize_params={"normalize": False}):
    if data is None:
        imgs = [io.imread(files[i]) for i in inds]
        imgs = _reshape_norm(imgs, channels=channels, channel_axis=channel_axis,
                             normalize_params=normalize_params)
        lbls = [io.imread(labels_files[i])[1:] for i in inds]
    else:
        imgs = [data[i] for i in inds]
        lbls = [labels[i][1:] for i in inds]
    return imgs, lbls


def _reshape_norm(data, channels=None, channel_axis=None, normalize_params={"normalize": False}):
    if channels is not None or channel_axis is not None:
        data = [transforms.convert_image(td, channels=channels, channel_axis=channel_axis)
                for td in data]
        data = [td.transpose(2, 0, 1) for td in data]
    if normalize_params["normalize"]:
        data = [transforms.normalize_img(td, normalize=normalize_params, axis=0) for td in data]
    return data


def train_seg(net, train_data=None, train_labels=None, train_files=None, train_labels_files=None,
              train_probs=None, test_data=None, test_labels=None, test_files=None,
              test_labels_files=None, test_probs=None, load_files=True, batch_size=8,
              learning_rate=0.005, SGD=False, n_epochs=2000, weight_decay=1e-5,
              momentum=0.9, normalize=True, compute_flows=False, save_path=None,
              save_every=100, save_each=False, nimg_per_epoch=None, nimg_test_per_epoch=None,
              rescale=True, scale_range=None, bsize=224, min_train_masks=5,
              model_name=None, channels=None, channel_axis=None):
    """Train the network with images for segmentation."""
    device = net.device

    scale_range0 = 0.5 if rescale else 1.0
    scale_range = scale_range if scale_range is not None else scale_range0

    normalize_params = {"normalize": normalize} if isinstance(normalize, bool) else normalize

    # compute flows on the device the network lives on (falls back to CPU code path otherwise)
    flow_device = device if device.type == "cuda" else None
    train_labels = [dynamics.labels_to_flows(lbl, device=flow_device)
                    if lbl.ndim < 3 else lbl for lbl in train_labels]
    if test_labels is not None:
        test_labels = [dynamics.labels_to_flows(lbl, device=flow_device)
                       if lbl.ndim < 3 else lbl for lbl in test_labels]

    diam_train = np.array([utils.diameters(lbl[0])[0] for lbl in train_labels])
    diam_train[diam_train < 5] = 5.
    nimg = len(train_data) if train_data is not None else len(train_files)
    nimg_per_epoch = nimg if nimg_per_epoch is None else nimg_per_epoch
    train_probs = 1. / nimg * np.ones(nimg, "float64") if train_probs is None else train_probs

    # learning rate schedule
    LR = np.linspace(0, learning_rate, 10)
    LR = np.append(LR, learning_rate * np.ones(max(0, n_epochs - 10)))
    if n_epochs > 300:
        LR = LR[:-100]
        for i in range(10):
            LR = np.append(LR, LR[-1] / 2 * np.ones(10))
    elif n_epochs > 99:
        LR = LR[:-50]
        for i in range(10):
            LR = np.append(LR, LR[-1] / 2 * np.ones(5))

    train_logger.info(f">>> n_epochs={n_epochs}, n_train={nimg}")
    if not SGD:
        optimizer = torch.optim.AdamW(net.parameters(), lr=learning_rate,
                                      weight_decay=weight_decay)
    else:
        optimizer = torch.optim.SGD(net.parameters(), lr=learning_rate,
                                    weight_decay=weight_decay, momentum=momentum)

    t0 = time.time()
    model_name = f"cellpose_{t0}" if model_name is None else model_name
    save_path = Path.cwd() if save_path is None else Path(save_path)
    filename = save_path / "models" / model_name
    (save_path / "models").mkdir(exist_ok=True)

    train_logger.info(f">>> saving model to {filename}")

    lavg, nsum = 0, 0
    for iepoch in range(n_epochs):
        np.random.seed(iepoch)
        rperm = np.random.choice(np.arange(0, nimg), size=(nimg_per_epoch,), p=train_probs)
        for param_group in optimizer.param_groups:
            param_group["lr"] = LR[iepoch]
        net.train()
        for k in range(0, nimg_per_epoch, batch_size):
            kend = min(k + batch_size, nimg_per_epoch)
            inds = rperm[k:kend]
            imgs, lbls = _get_batch(inds, data=train_data, labels=train_labels,
                                    files=train_files, labels_files=train_labels_files,
                                    channels=channels, channel_axis=channel_axis,
                                    normalize_params=normalize_params)
            diams = np.array([diam_train[i] for i in inds])
            rsc = diams / net.diam_mean.item() if rescale else np.ones(len(diams), "float32")
            imgi, lbl = transforms.random_rotate_and_resize(imgs, Y=lbls, rescale=rsc,
                                                            scale_range=scale_range,
                                                            xy=(bsize, bsize))[:2]
            X = torch.from_numpy(imgi).to(device)
            y = net(X)[0]
            loss = _loss_fn_seg(lbl, y, device)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            train_loss = loss.item()
            train_loss *= len(imgi)
            lavg += train_loss
            nsum += len(imgi)

        if iepoch == 5 or iepoch % 10 == 0:
            lavg = lavg / nsum
            train_logger.info(f"{iepoch}, train_loss={lavg:.4f}, LR={LR[iepoch]:.6f}, "
                              f"time {time.time() - t0:.2f}s, "
                              f"mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")
            lavg, nsum = 0, 0

        if iepoch > 0 and iepoch % save_every == 0:
            net.save_model(filename)
    net.save_model(filename)
    return filename
