import logging
import os

import torch
import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint, LearningRateMonitor
from pytorch_lightning.loggers import TensorBoardLogger
from pytorch_lightning.strategies import DDPStrategy

from .wrapper import ModelWrapper

logger = logging.getLogger('milipoint')


def get_strategy(name, num_devices):
    if num_devices <= 1:
        return 'auto'
    if name == 'ddp':
        # radar clouds are tiny; NCCL all-reduce of the gradients dominates otherwise
        return DDPStrategy(process_group_backend='nccl', find_unused_parameters=False,
                           gradient_as_bucket_view=True, static_graph=True)
    if name == 'ddp_spawn':
        return DDPStrategy(start_method='spawn', process_group_backend='nccl')
    return name


def train(model, train_loader, val_loader, optimizer, learning_rate, weight_decay,
          plt_trainer_args, save_path, strategy='ddp', num_devices=1, task='classification'):
    monitor = 'val_acc' if task != 'keypoint' else 'val_mle'
    mode = 'max' if task != 'keypoint' else 'min'
    callbacks = [LearningRateMonitor(logging_interval='epoch')]
    if save_path is not None:
        callbacks.append(ModelCheckpoint(
            dirpath=save_path, filename='best', monitor=monitor, mode=mode,
            save_top_k=1, save_last=True))

    tb = TensorBoardLogger('lightning_logs', name=os.path.basename(save_path) if save_path else 'default')
    plt_model = ModelWrapper(model, optimizer=optimizer, learning_rate=learning_rate,
                             weight_decay=weight_decay, epochs=plt_trainer_args['max_epochs'], task=task)

    trainer = pl.Trainer(
        **plt_trainer_args,
        strategy=get_strategy(strategy, num_devices),
        callbacks=callbacks,
        logger=tb,
        sync_batchnorm=num_devices > 1)
    trainer.fit(plt_model, train_dataloaders=train_loader, val_dataloaders=val_loader)

    if trainer.is_global_zero and torch.cuda.is_available():
        peak = torch.cuda.max_memory_allocated() / 2 ** 20
        logger.info('peak GPU memory on rank 0: %.1f MiB', peak)


def test(model, test_loader, plt_trainer_args, load_path, task='classification'):
    plt_model = ModelWrapper.load_from_checkpoint(load_path, model=model, task=task,
                                                  map_location='cpu')
    args = dict(plt_trainer_args)
    args['devices'] = 1   # single device for deterministic metrics
    trainer = pl.Trainer(**args, logger=False)
    results = trainer.test(plt_model, dataloaders=test_loader)
    logger.info('test results: %s', results)
    return results
