"""Callbacks shared by the training entry points (main.py, finetune.py).

SetupCallback   - creates the log/ckpt/config folders on rank 0 and dumps the resolved config
ImageLogger     - periodically logs reconstructions/samples to the experiment logger
CUDACallback    - per-epoch wall time and peak device memory, reduced over ranks
GPUUtilLogger   - optional NVML utilisation logging (only when pynvml is importable)
"""
import os
import time

import numpy as np
import torch
import torchvision
from omegaconf import OmegaConf
from PIL import Image

import lightning.pytorch as pl
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.utilities import rank_zero_info, rank_zero_only

try:
    import pynvml
except ImportError:  # pragma: no cover - optional dependency
    pynvml = None


class SetupCallback(Callback):
    def __init__(self, resume, now, logdir, ckptdir, cfgdir, config, lightning_config):
        super().__init__()
        self.resume = resume
        self.now = now
        self.logdir = logdir
        self.ckptdir = ckptdir
        self.cfgdir = cfgdir
        self.config = config
        self.lightning_config = lightning_config

    def on_keyboard_interrupt(self, trainer, pl_module):
        if trainer.global_rank == 0:
            print("Summoning checkpoint.")
            ckpt_path = os.path.join(self.ckptdir, "last.ckpt")
            trainer.save_checkpoint(ckpt_path)

    def on_fit_start(self, trainer, pl_module):
        if trainer.global_rank == 0:
            os.makedirs(self.logdir, exist_ok=True)
            os.makedirs(self.ckptdir, exist_ok=True)
            os.makedirs(self.cfgdir, exist_ok=True)
            print("Project config")
            print(OmegaConf.to_yaml(self.config))
            OmegaConf.save(self.config, os.path.join(self.cfgdir, "{}-project.yaml".format(self.now)))
            print("Lightning config")
            print(OmegaConf.to_yaml(self.lightning_config))
            OmegaConf.save(OmegaConf.create({"lightning": self.lightning_config}),
                           os.path.join(self.cfgdir, "{}-lightning.yaml".format(self.now)))


class ImageLogger(Callback):
    def __init__(self, batch_frequency, max_images, clamp=True, rescale=True, log_first_step=False):
        super().__init__()
        self.rescale = rescale
        self.batch_freq = batch_frequency
        self.max_images = max_images
        self.clamp = clamp
        self.log_first_step = log_first_step

    @rank_zero_only
    def log_local(self, save_dir, split, images, global_step, current_epoch, batch_idx):
        root = os.path.join(save_dir, "images", split)
        for k in images:
            grid = torchvision.utils.make_grid(images[k], nrow=4)
            if self.rescale:
                grid = (grid + 1.0) / 2.0  # -1,1 -> 0,1; c,h,w
            grid = grid.transpose(0, 1).transpose(1, 2).squeeze(-1)
            grid = grid.numpy()
            grid = (grid * 255).astype(np.uint8)
            filename = "{}_gs-{:06}_e-{:06}_b-{:06}.png".format(k, global_step, current_epoch, batch_idx)
            path = os.path.join(root, filename)
            os.makedirs(os.path.split(path)[0], exist_ok=True)
            Image.fromarray(grid).save(path)

    def log_img(self, pl_module, batch, batch_idx, split="train"):
        if batch_idx % self.batch_freq != 0 and not (self.log_first_step and batch_idx == 0):
            return
        if not hasattr(pl_module, "log_images") or not callable(pl_module.log_images):
            return
        is_train = pl_module.training
        if is_train:
            pl_module.eval()
        with torch.no_grad():
            images = pl_module.log_images(batch, split=split)
        for k in images:
            N = min(images[k].shape[0], self.max_images)
            images[k] = images[k][:N]
            if isinstance(images[k], torch.Tensor):
                images[k] = images[k].detach().cpu()
                if self.clamp:
                    images[k] = torch.clamp(images[k], -1., 1.)
        self.log_local(pl_module.logger.save_dir, split, images,
                       pl_module.global_step, pl_module.current_epoch, batch_idx)
        if is_train:
            pl_module.train()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self.log_img(pl_module, batch, batch_idx, split="train")

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        self.log_img(pl_module, batch, batch_idx, split="val")


class CUDACallback(Callback):
    # see https://github.com/SeanNaren/minGPT/blob/master/mingpt/callback.py
    def on_train_epoch_start(self, trainer, pl_module):
        # Reset the memory use counter
        torch.cuda.reset_peak_memory_stats(trainer.strategy.root_device.index)
        torch.cuda.synchronize(trainer.strategy.root_device.index)
        self.start_time = time.time()

    def on_train_epoch_end(self, trainer, pl_module):
        torch.cuda.synchronize(device=trainer.strategy.root_device.index)
        max_memory = torch.cuda.max_memory_allocated(trainer.strategy.root_device.index) / 2 ** 20
        epoch_time = time.time() - self.start_time

        try:
            max_memory = trainer.strategy.reduce(max_memory)
            epoch_time = trainer.strategy.reduce(epoch_time)

            rank_zero_info(f"Average Epoch time: {epoch_time:.2f} seconds")
            rank_zero_info(f"Average Peak memory {max_memory:.2f}MiB")
        except AttributeError:
            pass


class GPUUtilLogger(Callback):
    """Logs NVML utilisation every `every_n_steps`; silently disabled when NVML is unavailable."""

    def __init__(self, every_n_steps: int = 50):
        super().__init__()
        self.every_n_steps = every_n_steps
        self._handle = None

    def on_fit_start(self, trainer, pl_module):
        if pynvml is None:
            return
        try:
            pynvml.nvmlInit()
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(trainer.strategy.root_device.index or 0)
        except Exception:
            self._handle = None

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if self._handle is None or trainer.global_step % self.every_n_steps:
            return
        util = pynvml.nvmlDeviceGetUtilizationRates(self._handle)
        pl_module.log("gpu_util", float(util.gpu), on_step=True, rank_zero_only=True)


def default_callbacks(cfg, now, logdir, ckptdir, cfgdir, lightning_config):
    callbacks = [
        SetupCallback(cfg.get("resume", False), now, logdir, ckptdir, cfgdir, cfg, lightning_config),
        ImageLogger(batch_frequency=750, max_images=4, clamp=True),
        pl.callbacks.LearningRateMonitor(logging_interval="step"),
        CUDACallback(),
    ]
    if torch.cuda.is_available():
        callbacks.append(GPUUtilLogger())
    return callbacks
