from os import environ
from dataclasses import dataclass

import hydra
import lightning as L
import torch
from lightning.pytorch.callbacks import (
    EarlyStopping,
    LearningRateMonitor,
    ModelCheckpoint,
)
from lightning.pytorch.loggers import WandbLogger
from lightning.pytorch.strategies import DDPStrategy
from omegaconf import DictConfig, OmegaConf

from vap.callbacks import SymmetricSpeakersCallback, AudioAugmentationCallback, VADMaskCallback
from vap.data.datamodule import VAPDataModule
from vap.modules.lightning_module import VAPModule
from vap.modules.VAP import VAP
from vap.modules.encoder import EncoderCPC
from vap.modules.modules import TransformerStereo
from vap.utils.utils import everything_deterministic

everything_deterministic()

# Tensor cores on Ampere+: trade a little precision for a lot of speed
torch.set_float32_matmul_precision("medium")


@dataclass
class OptConfig:
    learning_rate: float = 3.63e-4
    betas: tuple = (0.9, 0.999)
    weight_decay: float = 0.001
    lr_scheduler_interval: str = "step"
    lr_scheduler_freq: int = 100
    lr_scheduler_tmax: int = 2500
    lr_scheduler_patience: int = 2
    lr_scheduler_factor: float = 0.5
    # early stopping
    early_stopping: bool = True
    patience: int = 10
    monitor: str = "val_loss"
    mode: str = "min"
    save_top_k: int = 2


def get_run_name(cfg_dict) -> str:
    name = "VAP"
    if "encoder" in cfg_dict["model"]:
        name += f"_{cfg_dict['model']['encoder']['name']}"
    name += f"_{cfg_dict['model']['transformer']['num_layers']}L"
    name += f"_{cfg_dict['model']['transformer']['dim']}D"
    return name


@hydra.main(version_base=None, config_path="conf", config_name="default_config")
def train(cfg: DictConfig) -> None:
    cfg_dict = dict(OmegaConf.to_object(cfg))

    if "debug" in cfg_dict:
        environ["WANDB_MODE"] = "offline"
        print("DEBUG -> OFFLINE MODE")

    L.seed_everything(cfg_dict["seed"])
    local_rank = environ.get("LOCAL_RANK", 0)

    encoder = EncoderCPC(**cfg_dict["model"]["encoder"])
    transformer = TransformerStereo(**cfg_dict["model"]["transformer"])
    model = VAP(encoder, transformer, **cfg_dict["model"]["vap"])
    module = VAPModule(model, opt_conf=OptConfig(**cfg_dict["opt"]))

    dm = VAPDataModule(**cfg_dict["datamodule"])
    dm.prepare_data()

    if local_rank == 0:
        print("#" * 40)
        print(f"Training {get_run_name(cfg_dict)}")
        print(module.model)
        print(dm)
        print("#" * 40)

    logger = None
    if not cfg_dict["trainer"].get("fast_dev_run", False):
        logger = WandbLogger(
            project=cfg_dict["wandb"]["project"],
            name=get_run_name(cfg_dict),
            log_model=False,
            save_dir="runs",
        )

    callbacks = [
        ModelCheckpoint(
            mode=module.opt_conf.mode,
            monitor=module.opt_conf.monitor,
            save_top_k=module.opt_conf.save_top_k,
            auto_insert_metric_name=False,
            filename=get_run_name(cfg_dict) + "-epoch{epoch}-val_{val_loss:.2f}",
        ),
        LearningRateMonitor(),
        SymmetricSpeakersCallback(),
        AudioAugmentationCallback(device="cuda"),
    ]
    if cfg_dict["datamodule"].get("vad_mask", False):
        callbacks.append(VADMaskCallback())

    if module.opt_conf.early_stopping:
        callbacks.append(
            EarlyStopping(
                monitor=module.opt_conf.monitor,
                mode=module.opt_conf.mode,
                patience=module.opt_conf.patience,
                strict=True,
                verbose=False,
            )
        )

    strategy = "auto"
    if cfg_dict["trainer"].get("devices", 1) not in (1, [0]):
        strategy = DDPStrategy(find_unused_parameters=False, process_group_backend="nccl")

    trainer = L.Trainer(
        logger=logger,
        callbacks=callbacks,
        strategy=strategy,
        **cfg_dict["trainer"],
    )
    trainer.fit(module, datamodule=dm)


if __name__ == "__main__":
    train()
