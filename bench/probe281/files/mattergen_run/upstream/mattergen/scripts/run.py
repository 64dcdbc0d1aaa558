# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.

import logging
import os
import random
from typing import Any, Mapping, TypeVar

import hydra
import numpy as np
import omegaconf
import pytorch_lightning as pl
import torch
from omegaconf import DictConfig, OmegaConf
from pytorch_lightning.cli import SaveConfigCallback
from pytorch_lightning.utilities import rank_zero_only

from mattergen.common.utils.eval_utils import MatterGenCheckpointInfo
from mattergen.common.utils.globals import MODELS_PROJECT_ROOT, get_device
from mattergen.diffusion.config import Config
from mattergen.diffusion.exceptions import AmbiguousConfig
from mattergen.diffusion.lightning_module import DiffusionLightningModule
from mattergen.diffusion.run import AddConfigCallback, SimpleParser, maybe_instantiate

logger = logging.getLogger(__name__)

T = TypeVar("T")


def init_adapter_lightningmodule_from_pretrained(
    adapter_cfg: DictConfig, lightning_module_cfg: DictConfig
) -> tuple[pl.LightningModule, DictConfig]:
    """Build a fine-tuning module whose score model wraps a pretrained
    unconditional model with property adapters (GemNetTCtrl)."""
    assert adapter_cfg.model_path is not None, "model_path must be provided."

    model_path = adapter_cfg.model_path
    ckpt_info = MatterGenCheckpointInfo(model_path, adapter_cfg.load_epoch)
    ckpt_path = ckpt_info.checkpoint_path

    version_root_path = ckpt_info.model_path
    config_path = os.path.join(version_root_path, "config.yaml")

    # load pretrained model config.
    if os.path.exists(config_path):
        pretrained_cfg = OmegaConf.load(config_path)
    else:
        raise ValueError(f"Could not find config at {config_path}")

    # replace the score model with the adapter version
    pretrained_cfg.lightning_module.diffusion_module.model = adapter_cfg.adapter
    lightning_module_cfg = OmegaConf.merge(
        pretrained_cfg.lightning_module, lightning_module_cfg
    )

    lightning_module = hydra.utils.instantiate(lightning_module_cfg)

    # checkpoints are loaded on the host and moved by Lightning afterwards
    ckpt: dict = torch.load(ckpt_path, map_location="cpu")
    pretrained_dict: Mapping[str, torch.Tensor] = ckpt["state_dict"]
    scoremodel_dict = lightning_module.diffusion_module.model.state_dict()

    pretrained_dict = {
        k.replace("diffusion_module.model.", ""): v
        for k, v in pretrained_dict.items()
        if k.startswith("diffusion_module.model.")
    }
    missing = set(scoremodel_dict) - set(pretrained_dict)
    logger.info(f"{len(missing)} adapter parameters are initialised from scratch")
    scoremodel_dict.update(pretrained_dict)
    lightning_module.diffusion_module.model.load_state_dict(scoremodel_dict, strict=True)

    if not adapter_cfg.full_finetuning:
        for name, param in lightning_module.named_parameters():
            if name in {f"diffusion_module.model.{k}" for k in pretrained_dict}:
                param.requires_grad_(False)

    return lightning_module, lightning_module_cfg


def _seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    pl.seed_everything(seed, workers=True)


def _per_device_batch_size(cfg: DictConfig) -> int:
    """Global batch size in the config is split evenly across devices."""
    devices = cfg.trainer.get("devices", 1)
    if devices == -1:
        n_devices = torch.cuda.device_count()
    else:
        n_devices = int(devices)
    n_devices = n_devices * cfg.trainer.get("num_nodes", 1)
    global_bs = cfg.data_module.batch_size.train
    per_device = global_bs // max(n_devices, 1) // cfg.trainer.accumulate_grad_batches
    if per_device < 1:
        raise ValueError(f"global batch size {global_bs} is too small for {n_devices} devices")
    return per_device


def main(
    config: Config | DictConfig, save_config: bool = True, seed: int | None = None
) -> tuple[pl.Trainer, pl.LightningModule]:
    """
    Main entry point to train and evaluate a diffusion model.

    save_config: if True, the config will be saved both as a YAML file and in each checkpoint. This doesn't work if the config contains things that can't be `yaml.dump`-ed, so if you don't care about saving and loading checkpoints and want to use a config that contains things like `torch.nn.Module`s already instantiated, set this to False.
    """
    if config.checkpoint_path and config.auto_resume:
        raise AmbiguousConfig(
            f"Ambiguous config: you set both a checkpoint path {config.checkpoint_path} and `auto_resume` which means automatically select a checkpoint path to resume from."
        )
    if seed is not None:
        _seed_everything(seed)

    trainer: pl.Trainer = maybe_instantiate(config.trainer, pl.Trainer)

    if save_config:
        if isinstance(config, DictConfig):
            config_as_dict = OmegaConf.to_container(config, resolve=True)
            # This callback will save a config.yaml file.
            trainer.callbacks.append(
                SaveConfigCallback(
                    parser=SimpleParser(),
                    config=config_as_dict,
                    overwrite=True if config.auto_resume else False,
                )
            )
            # This callback will add a copy of the config to each checkpoint.
            trainer.callbacks.append(AddConfigCallback(config_as_dict))
        else:
            raise NotImplementedError

    datamodule: pl.LightningDataModule = maybe_instantiate(
        config.data_module, pl.LightningDataModule
    )

    # If checkpoint_path is provided, training will be resumed from this point.
    # Beware: the old checkpoint will be deleted when a new one is saved.
    ckpt_path = config.checkpoint_path
    if config.auto_resume:
        # Add an additional checkpoint callback that saves the last checkpoint
        ckpt_path = "last"

    pl_module: pl.LightningModule = maybe_instantiate(config.lightning_module, pl.LightningModule)

    trainer.fit(
        model=pl_module,
        datamodule=datamodule,
        ckpt_path=ckpt_path,
    )

    return trainer, pl_module


@hydra.main(
    config_path=str(MODELS_PROJECT_ROOT / "conf"), config_name="default", version_base="1.1"
)
def mattergen_main(cfg: omegaconf.DictConfig):
    # Tensor Core acceleration (leads to ~2x speed-up during training)
    torch.set_float32_matmul_precision("high")
    # Make merged config options
    # CLI options take priority over YAML file options
    schema = OmegaConf.structured(Config)
    config = OmegaConf.merge(schema, cfg)
    OmegaConf.set_readonly(config, True)  # should not be written to

    if config.get("adapter") is not None:
        with OmegaConf.read_write(config):
            lightning_module, lightning_module_cfg = init_adapter_lightningmodule_from_pretrained(
                config.adapter, config.lightning_module
            )
            config.lightning_module = lightning_module_cfg
        config = OmegaConf.merge(config, {"lightning_module": lightning_module_cfg})

    with OmegaConf.read_write(config):
        config.data_module.batch_size.train = _per_device_batch_size(config)

    print(OmegaConf.to_yaml(cfg, resolve=True))
    logger.info(f"Training on {get_device()} (per-device batch {config.data_module.batch_size.train})")

    main(config)


if __name__ == "__main__":
    mattergen_main()
