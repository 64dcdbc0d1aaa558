import copy
import os
import random
import time
from functools import partial, wraps
from typing import Callable, List, Sequence

import hydra
import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn as nn
import wandb
from omegaconf import OmegaConf
from pytorch_lightning.loggers import WandbLogger
from pytorch_lightning.utilities import rank_zero_only, rank_zero_warn
from tqdm.auto import tqdm

import src.models.nn.utils as U
import src.utils as utils
import src.utils.train
from src.dataloaders import SequenceDataset  # TODO make registry
from src.tasks import decoders, encoders, tasks
from src.utils import registry
from src.utils.optim_groups import add_optimizer_hooks

log = src.utils.train.get_logger(__name__)

# Turn on TensorFloat32 (speeds up large model training substantially)
import torch.backends

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True

OmegaConf.register_new_resolver('eval', eval)
OmegaConf.register_new_resolver('div_up', lambda x, y: (x + y - 1) // y)


def set_gpu_affinity(local_rank: int) -> None:
    """Pin each rank to the CPU cores closest to its GPU (NVML topology), as in NVIDIA's DLE scripts."""
    import pynvml

    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(local_rank)
    n_words = (os.cpu_count() + 63) // 64
    affinity_words = pynvml.nvmlDeviceGetCpuAffinity(handle, n_words)
    cores = []
    for word_idx, word in enumerate(affinity_words):
        for bit in range(64):
            if (word >> bit) & 1:
                cores.append(word_idx * 64 + bit)
    os.sched_setaffinity(0, cores)
    log.info(f"rank {local_rank}: bound to {len(cores)} cores near GPU {local_rank}")


# Lots of annoying hacks to get WandbLogger to continuously retry on failure
class DummyExperiment:
    """Dummy experiment."""

    def nop(self, *args, **kw):
        pass

    def __getattr__(self, _):
        return self.nop

    def __getitem__(self, idx) -> "DummyExperiment":
        # enables @rank_zero_experiment decorator
        return self

    def __setitem__(self, *args, **kwargs) -> None:
        pass


class SequenceLightningModule(pl.LightningModule):
    def __init__(self, config):
        # Disable profiling executor. This reduces memory and increases speed.
        try:
            torch._C._jit_set_profiling_executor(False)
            torch._C._jit_set_profiling_mode(False)
        except AttributeError:
            pass

        super().__init__()
        # Passing in config expands it one level, so can access by self.hparams.train instead of self.hparams.config.train
        self.save_hyperparameters(config, logger=False)

        # Dataset arguments
        self.dataset = SequenceDataset.registry[self.hparams.dataset._name_](**self.hparams.dataset)

        # Check hparams
        self._check_config()

        # PL has some bugs, so add hooks and make sure they're only called once
        self._has_setup = False

        self.setup()  ## Added by KS

    def setup(self, stage=None):
        if not self.hparams.train.disable_dataset:
            self.dataset.setup()

        # We need to set up the model in setup() because for some reason when training with DDP, one GPU uses much more memory than the others
        # In order to not overwrite the model multiple times during different stages, we need this hack
        if self._has_setup:
            return
        else:
            self._has_setup = True

        # Convenience feature: if model specifies encoder, combine it with main encoder
        encoder_cfg = utils.to_list(self.hparams.encoder) + utils.to_list(self.hparams.model.pop("encoder", None))
        decoder_cfg = utils.to_list(self.hparams.model.pop("decoder", None)) + utils.to_list(self.hparams.decoder)

        # Instantiate model
        self.model = utils.instantiate(registry.model, self.hparams.model)
        if (name := self.hparams.train.post_init_hook['_name_']) is not None:
            kwargs = self.hparams.train.post_init_hook.copy()
            del kwargs['_name_']
            for module in self.modules():
                if hasattr(module, name):
                    getattr(module, name)(**kwargs)

        # Instantiate the task
        self.task = utils.instantiate(tasks.registry, self.hparams.task, dataset=self.dataset, model=self.model)

        # Create encoders and decoders
        encoder = encoders.instantiate(encoder_cfg, dataset=self.dataset, model=self.model)
        decoder = decoders.instantiate(decoder_cfg, model=self.model, dataset=self.dataset)

        # Extract the modules so they show up in the top level parameter count
        self.encoder = U.PassthroughSequential(self.task.encoder, encoder)
        self.decoder = U.PassthroughSequential(decoder, self.task.decoder)
        self.loss = self.task.loss
        self.loss_val = self.task.loss
        if hasattr(self.task, 'loss_val'):
            self.loss_val = self.task.loss_val
        self.metrics = self.task.metrics

    def _check_config(self):
        assert self.hparams.train.state.mode in [None, "none", "null", "reset", "bptt", "tbptt"]
        assert (
            (n := self.hparams.train.state.n_context) is None
            or isinstance(n, int)
            and n >= 0
        )

    def forward(self, batch):
        x, y, *z = batch  # z holds arguments such as sequence length
        x, w = self.encoder(x, **z[0]) if z else self.encoder(x)
        x, state = self.model(x, **w)
        x, w = self.decoder(x, state=state, **w)
        return x, y, w

    def _shared_step(self, batch, batch_idx, prefix="train"):
        x, y, w = self.forward(batch)
        if prefix == 'train':
            loss = self.loss(x, y, **w)
        else:
            loss = self.loss_val(x, y, **w)
        metrics = self.metrics(x, y, **w)
        metrics["loss"] = loss
        metrics = {f"{prefix}/{k}": v for k, v in metrics.items()}
        self.log_dict(metrics, on_step=prefix == "train", on_epoch=True, prog_bar=True, add_dataloader_idx=False, sync_dist=True)
        return loss

    def training_step(self, batch, batch_idx, dataloader_idx=0):
        return self._shared_step(batch, batch_idx, prefix="train")

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        return self._shared_step(batch, batch_idx, prefix="val")

    def on_validation_epoch_end(self):
        torch.cuda.empty_cache()

    def configure_optimizers(self):
        params = self.parameters()
        optimizer = utils.instantiate(registry.optimizer, self.hparams.optimizer, params)
        add_optimizer_hooks(self.model)
        lr_scheduler = utils.instantiate(registry.scheduler, self.hparams.scheduler, optimizer)
        scheduler = {
            "scheduler": lr_scheduler,
            "interval": self.hparams.train.interval,  # 'epoch' or 'step'
            "monitor": self.hparams.train.monitor,
            "name": "trainer/lr",  # default is e.g. 'lr-AdamW'
        }
        return [optimizer], [scheduler]

    def train_dataloader(self):
        return self.dataset.train_dataloader(**self.hparams.loader)

    def val_dataloader(self):
        return self.dataset.val_dataloader(**self.hparams.loader)


def create_trainer(config):
    callbacks: List[pl.Callback] = []
    logger = None

    # WandB Logging
    if config.get("wandb") is not None:
        logger = WandbLogger(config=utils.to_dict(config, recursive=True), settings=wandb.Settings(start_method="fork"), **config.wandb)

    # Lightning callbacks
    if "callbacks" in config:
        for _name_, callback in config.callbacks.items():
            if callback is None:
                continue
            if config.get("wandb") is None and _name_ in ["learning_rate_monitor"]:
                continue
            log.info(f"Instantiating callback <{registry.callbacks[_name_]}>")
            callback._name_ = _name_
            callbacks.append(utils.instantiate(registry.callbacks, callback))

    # Profiler
    profiler = None
    if config.trainer.get("profiler", None) is not None:
        profiler = hydra.utils.instantiate(config.trainer.profiler)
        config.trainer.pop("profiler")

    # Configure ddp automatically
    n_gpus = torch.cuda.device_count()
    if config.trainer.get('devices', 1) > n_gpus:
        log.warning(f"Requested {config.trainer.devices} devices but only {n_gpus} visible: using {n_gpus}")
        config.trainer.devices = n_gpus
    if config.trainer.get('strategy', None) is None and n_gpus > 1:
        config.trainer.strategy = dict(
            _target_='pytorch_lightning.strategies.DDPStrategy',
            find_unused_parameters=False,
            gradient_as_bucket_view=True,  # https://pytorch-lightning.readthedocs.io/en/stable/advanced/advanced_gpu.html#ddp-optimizations
        )

    # Init lightning trainer
    log.info(f"Instantiating trainer <{config.trainer._target_}>")
    trainer = pl.Trainer(
        logger=logger,
        callbacks=callbacks,
        profiler=profiler,
        **config.trainer,
    )
    return trainer


def train(config):
    if config.train.seed is not None:
        pl.seed_everything(config.train.seed, workers=True)
    if config.train.get("gpu_affinity", True):
        set_gpu_affinity(int(os.environ.get("LOCAL_RANK", 0)))
    trainer = create_trainer(config)
    model = SequenceLightningModule(config)
    if config.train.get("compile_model", False):
        model = torch.compile(model, mode="reduce-overhead")

    # Run initial validation epoch (useful for debugging, finetuning)
    if config.train.validate_at_start:
        log.info("Running validation before training")
        trainer.validate(model)

    if config.train.ckpt is not None:
        trainer.fit(model, ckpt_path=config.train.ckpt)
    else:
        trainer.fit(model)
    if config.train.test:
        trainer.test(model)


@hydra.main(config_path="configs", config_name="config.yaml")
def main(config: OmegaConf):
    # Process config:
    # - register evaluation resolver
    # - filter out keys used only for interpolation
    # - optional hooks, including disabling python warnings or debug friendly configuration
    config = utils.train.process_config(config)

    # Pretty print config using Rich library
    utils.train.print_config(config, resolve=True)

    train(config)


if __name__ == "__main__":
    main()
