import logging
import os
import sys
from pathlib import Path

import hydra
import pytorch_lightning as pl
import torch
from omegaconf import OmegaConf
from pytorch_lightning.callbacks import ModelCheckpoint
from pytorch_lightning.loggers import CSVLogger, WandbLogger
from pytorch_lightning.strategies import DDPStrategy

from training.PlanT.dataset import generate_batch, get_dataloader
from training.PlanT.lit_module import LitHFLM

logger = logging.getLogger(__name__)


def _num_devices(cfg):
    """Number of GPUs to train on: cfg.gpus, capped by what the node actually has."""
    available = torch.cuda.device_count()
    if available == 0:
        logger.warning("No CUDA device found - training will be extremely slow on CPU.")
        return 1
    return min(cfg.gpus, available)


@hydra.main(config_path=f"../config", config_name="config", version_base="1.1")
def main(cfg):

    # print config
    print(OmegaConf.to_yaml(cfg))

    # setup debug mode
    overfit = 0.0
    if cfg.debug:
        os.environ["WANDB_MODE"] = "offline"
        cfg.expname = "debug"
        overfit = 5  # use only 5 fixed batches for debugging

    if cfg.overfit > 0:
        overfit = cfg.overfit

    # use data caching for ML-Cloud #TODO
    shared_dict = None

    pl.seed_everything(cfg.seed)

    # Ampere and newer: let fp32 matmuls use TF32 tensor cores (Lightning warns about this otherwise)
    if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8:
        torch.set_float32_matmul_precision("high")
    torch.backends.cudnn.allow_tf32 = True

    # create dataloaders
    train_loader, val_loader = get_dataloader(cfg, shared_dict=shared_dict)

    # load model
    if cfg.model.training.get("pretrained_path", None) and cfg.model.training.pretrained_path != "none":
        logger.info(f"Loading pretrained model from {cfg.model.training.pretrained_path}")
        model = LitHFLM.load_from_checkpoint(cfg.model.training.pretrained_path, cfg=cfg)
    else:
        model = LitHFLM(cfg=cfg)

    num_devices = _num_devices(cfg)
    if num_devices > 1:
        replace_sampler_ddp = not cfg.custom_sampler
        strategy = DDPStrategy(find_unused_parameters=False)
    else:
        replace_sampler_ddp = True
        strategy = None

    Path(f"checkpoints/").mkdir(parents=True, exist_ok=True)

    csvlogger = CSVLogger("log/", "CSVLogger")
    wandblogger = WandbLogger(
        project=cfg.exp_folder_name,
        name=cfg.wandb_name,
        config=OmegaConf.to_container(cfg, resolve=True),
        entity="seqdrive",
    )
    Path(f"log/TBLogger").mkdir(parents=True, exist_ok=True)

    checkpoint_callback = ModelCheckpoint(
        save_top_k=-1,
        monitor=None,
        dirpath="./checkpoints",
        filename="{epoch:03d}",
        save_last=True,
        every_n_epochs=2,
    )

    resume_path = "./checkpoints/last.ckpt"
    if os.path.exists(resume_path) and cfg.resume:
        resume_path = resume_path
    else:
        resume_path = None

    trainer = pl.Trainer(
        callbacks=[checkpoint_callback],
        accelerator=cfg.trainer.accelerator,
        devices=num_devices,
        strategy=strategy,
        precision=cfg.trainer.precision,
        logger=[csvlogger, wandblogger],
        log_every_n_steps=2,
        check_val_every_n_epoch=2,
        max_epochs=cfg.max_epochs,
        overfit_batches=overfit,
        replace_sampler_ddp=replace_sampler_ddp,
        gradient_clip_val=cfg.model.training.grad_norm_clip,
    )

    trainer.fit(model, train_loader, val_loader, ckpt_path=resume_path)


if __name__ == "__main__":
    main()
