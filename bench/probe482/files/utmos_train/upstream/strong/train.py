import os
import hydra
import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint, EarlyStopping
from pytorch_lightning.loggers import WandbLogger
from pytorch_lightning.strategies import DDPStrategy
from lightning_module import BaselineLightningModule
from dataset import DataModule, CVDataModule
import torch


@hydra.main(config_path="configs", config_name='default')
def train(cfg):
    debug = cfg.debug
    if debug:
        cfg.train.trainer_args.max_steps = 10

    loggers = []
    loggers.append(pl.loggers.CSVLogger(save_dir=cfg.train.out_dir, name="train_log"))
    if cfg.train.use_wandb:
        loggers.append(WandbLogger(project="voicemos", offline=debug))

    checkpoint_callback = ModelCheckpoint(
        dirpath=cfg.train.model_selection_metric,
        save_weights_only=False,
        save_top_k=1,
        save_last=False,
        every_n_epochs=1,
        monitor=cfg.train.model_selection_metric,
        mode='max'
    )
    callbacks = [checkpoint_callback]
    earlystop_callback = EarlyStopping(
        monitor="val_loss", min_delta=0.0, patience=cfg.train.early_stopping.patience, mode="min"
    )
    callbacks.append(earlystop_callback)

    # multi-GPU runs use plain DDP; fairseq's SSL encoder has unused quantizer params
    n_devices = cfg.train.trainer_args.devices
    if n_devices != 1 and torch.cuda.device_count() > 1:
        strategy = DDPStrategy(find_unused_parameters=True, process_group_backend="nccl")
    else:
        strategy = None

    trainer = pl.Trainer(
        **cfg.train.trainer_args,
        strategy=strategy,
        default_root_dir=os.getcwd(),
        limit_train_batches=0.01 if debug else 1.0,
        limit_val_batches=0.5 if debug else 1.0,
        callbacks=callbacks,
        logger=loggers,
    )

    if cfg.get('cv', False):
        for i_cv in range(cfg.dataset.num_folds):
            datamodule = CVDataModule(cfg=cfg, k_cv=cfg.dataset.num_folds, i_cv=i_cv)
            lightning_module = BaselineLightningModule(cfg)
            trainer.fit(lightning_module, datamodule=datamodule)
    else:
        datamodule = hydra.utils.instantiate(cfg.dataset.datamodule, cfg=cfg, _recursive_=False)
        lightning_module = BaselineLightningModule(cfg)
        trainer.fit(lightning_module, datamodule=datamodule)

    if debug:
        trainer.test(lightning_module, verbose=True, datamodule=datamodule)
    else:
        trainer.test(lightning_module, verbose=True, datamodule=datamodule, ckpt_path=checkpoint_callback.best_model_path)


if __name__ == "__main__":
    train()
