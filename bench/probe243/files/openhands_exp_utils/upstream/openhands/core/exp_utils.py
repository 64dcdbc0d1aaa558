import os
import sys
import time
import logging
from pathlib import Path
from typing import Optional, Union

import omegaconf
import torch
import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint, EarlyStopping, LearningRateMonitor
from pytorch_lightning.loggers import TensorBoardLogger, WandbLogger
from pytorch_lightning.plugins import DDPPlugin

log = logging.getLogger(__name__)


def configure_checkpointing(trainer, cfg):
    """
    Creates ModelCheckpoint callback and appends it to the trainer's callbacks
    """
    for callback in trainer.callbacks:
        if isinstance(callback, ModelCheckpoint):
            raise ValueError(
                "Trainer already has a ModelCheckpoint callback. Please remove it or "
                "set `create_checkpoint_callback: false` in exp_manager."
            )
    if "filename" not in cfg:
        cfg.filename = "{epoch}-{step}-{" + cfg.monitor + ":.3f}"
    checkpoint_callback = ModelCheckpoint(**cfg)
    trainer.callbacks.append(checkpoint_callback)
    return checkpoint_callback


def configure_early_stopping(trainer, cfg):
    early_stop_callback = EarlyStopping(**cfg)
    trainer.callbacks.append(early_stop_callback)


def configure_loggers(trainer, exp_dir, cfg):
    loggers = []
    if cfg.get("create_tensorboard_logger", False):
        tb_logger = TensorBoardLogger(save_dir=exp_dir, name="tb_logs")
        loggers.append(tb_logger)
    if cfg.get("create_wandb_logger", False):
        kwargs = cfg.get("wandb_logger_kwargs", {}) or {}
        if kwargs.get("name") is None or kwargs.get("project") is None:
            raise ValueError("name and project are required for the wandb logger")
        wandb_logger = WandbLogger(save_dir=exp_dir, **kwargs)
        loggers.append(wandb_logger)
    if loggers:
        trainer.logger_connector.configure_logger(loggers)
    return loggers


def experiment_manager(trainer, cfg=None):
    """
    Sets up checkpointing / logging / early stopping for the given trainer.

    Args:
        trainer (pl.Trainer): trainer created by `get_trainer`.
        cfg (omegaconf.DictConfig): the `exp_manager` section of the config.
    """
    if cfg is None:
        return
    exp_dir = cfg.get("exp_dir", None) or os.path.join(os.getcwd(), "experiments")
    Path(exp_dir).mkdir(parents=True, exist_ok=True)

    configure_loggers(trainer, exp_dir, cfg)

    if cfg.get("create_checkpoint_callback", False):
        configure_checkpointing(trainer, cfg.checkpoint_callback_params)

    if cfg.get("early_stopping_callback", False):
        configure_early_stopping(trainer, cfg.early_stopping_params)

    trainer.callbacks.append(LearningRateMonitor(logging_interval="epoch"))


def _num_gpus(trainer_cfg):
    gpus = trainer_cfg.get("gpus", 0)
    if isinstance(gpus, (list, omegaconf.ListConfig)):
        return len(gpus)
    if isinstance(gpus, str):
        return len([g for g in gpus.split(",") if g.strip()])
    if gpus == -1:
        return torch.cuda.device_count()
    return int(gpus or 0)


def get_trainer(cfg):
    """
    Builds the pytorch-lightning trainer from `cfg.trainer`.

    If more than one GPU is requested, DDP is used (one process per GPU).
    """
    trainer_cfg = omegaconf.OmegaConf.to_container(cfg.trainer, resolve=True)
    n_gpus = _num_gpus(trainer_cfg)
    if n_gpus > 1:
        trainer_cfg["accelerator"] = "ddp"
        trainer_cfg["plugins"] = [DDPPlugin(find_unused_parameters=False)]
        trainer_cfg.setdefault("sync_batchnorm", True)
    if n_gpus == 0 and torch.cuda.is_available():
        log.warning("CUDA is available but trainer.gpus=0, training will run on CPU")
    if "deterministic" in trainer_cfg and trainer_cfg["deterministic"]:
        torch.backends.cudnn.benchmark = False
    trainer = pl.Trainer(**trainer_cfg)
    experiment_manager(trainer, cfg.get("exp_manager", None))
    return trainer


def print_gpu_info():
    if not torch.cuda.is_available():
        print("No GPU found, running on CPU")
        return
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        print(f"GPU {i}: {props.name} ({props.total_memory / 1024 ** 3:.1f} GB)")


def set_global_seed(seed):
    pl.seed_everything(seed, workers=True)


def load_config(path, overrides=None):
    cfg = omegaconf.OmegaConf.load(path)
    if overrides:
        cfg = omegaconf.OmegaConf.merge(cfg, omegaconf.OmegaConf.from_dotlist(overrides))
    return cfg


def main():
    import argparse
    parser = argparse.ArgumentParser(description="Train an OpenHands ISLR model")
    parser.add_argument("config", help="path to the YAML config")
    parser.add_argument("overrides", nargs="*", help="dotlist overrides, e.g. trainer.gpus=2")
    args = parser.parse_args()

    cfg = load_config(args.config, args.overrides)
    set_global_seed(cfg.get("seed", 0))
    print_gpu_info()

    from openhands.apis.classification_model import ClassificationModel
    trainer = get_trainer(cfg)
    model = ClassificationModel(cfg=cfg, trainer=trainer)
    model.init_from_checkpoint_if_available()
    start = time.time()
    model.fit()
    log.info("Training took %.1f min", (time.time() - start) / 60)


if __name__ == "__main__":
    main()
