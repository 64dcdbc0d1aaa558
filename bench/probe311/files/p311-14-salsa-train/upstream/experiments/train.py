"""
This module train a sound event localization and detection (SELD) model with SALSA features.
It uses PyTorch Lightning for the training loop; the number of GPUs is picked up from the machine.
"""
import logging
import os
import time

import fire
import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import ModelCheckpoint, LearningRateMonitor
from pytorch_lightning.loggers import TensorBoardLogger, CSVLogger

from utilities.builder_utils import build_database, build_datamodule, build_model, build_task
from utilities.experiments_utils import manage_experiments
from utilities.learning_utils import LearningRateScheduler, MyLoggingCallback


def _log_hardware(logger):
    logger.info('torch {} / cuda {} / cudnn {}'.format(torch.__version__, torch.version.cuda,
                                                         torch.backends.cudnn.version()))
    n_gpus = torch.cuda.device_count()
    for i in range(n_gpus):
        props = torch.cuda.get_device_properties(i)
        logger.info('GPU {}: {} ({:.1f} GB, sm_{}{})'.format(i, props.name, props.total_memory / 1024 ** 3,
                                                               props.major, props.minor))
    return n_gpus


def train(exp_config: str = './configs/seld.yml',
          exp_group_dir: str = '/media/tho_nguyen/disk2/new_seld/dcase2021/outputs',
          exp_suffix: str = '_test',
          resume: bool = False,
          num_gpus: int = -1):
    """
    Training script
    :param exp_config: Config file for experiments
    :param exp_group_dir: Parent directory to store all experiment results.
    :param exp_suffix: Experiment suffix.
    :param resume: If true, resume training from the last epoch.
    :param num_gpus: Number of GPUs to train on (-1: all visible GPUs).
    """
    # Load config, create folders, logging
    cfg = manage_experiments(exp_config=exp_config, exp_group_dir=exp_group_dir, exp_suffix=exp_suffix, is_train=True)
    logger = logging.getLogger('lightning')

    # Set random seed for reproducible
    pl.seed_everything(cfg.seed)

    # Resume training
    if resume:
        ckpt_list = [f for f in os.listdir(cfg.dir.model.checkpoint) if f.startswith('epoch') and f.endswith('ckpt')]
        if len(ckpt_list) > 0:
            resume_from_checkpoint = os.path.join(cfg.dir.model.checkpoint, ckpt_list[-1])
            logger.info('Found checkpoint to be resume training at {}'.format(resume_from_checkpoint))
        else:
            resume_from_checkpoint = None
    else:
        resume_from_checkpoint = None

    # Load feature database - will use a builder function build_feature_db to select feature db.
    feature_db = build_database(cfg=cfg)

    # Load data module
    datamodule = build_datamodule(cfg=cfg, feature_db=feature_db)
    datamodule.setup(stage='fit')
    steps_per_train_epoch = int(len(datamodule.train_dataloader()))

    # Model checkpoint
    model_checkpoint = ModelCheckpoint(dirpath=cfg.dir.model.checkpoint, filename='{epoch:03d}')

    # Console logger
    console_logger = MyLoggingCallback()

    # Tensorboard logger
    tb_logger = TensorBoardLogger(save_dir=cfg.dir.tb_dir, name='my_model')

    # Build encoder and decoder
    encoder_params = cfg.model.encoder.__dict__
    encoder = build_model(**encoder_params)
    decoder_params = cfg.model.decoder.__dict__
    decoder_params = {'n_output_channels': encoder.n_output_channels, 'n_classes': feature_db.n_classes,
                      'output_format': feature_db.label_format, **decoder_params}
    decoder = build_model(**decoder_params)

    # Build Lightning model
    model = build_task(encoder=encoder, decoder=decoder, cfg=cfg, output_pred_dir=cfg.dir.output_dir.submission,
                       submission_dir=cfg.dir.output_dir.submission, test_chunk_len=feature_db.test_chunk_len,
                       test_chunk_hop_len=feature_db.test_chunk_hop_len, is_tta=cfg.data.is_tta)

    # Train
    callback_list = [console_logger, model_checkpoint]
    if cfg.training.lr_scheduler == 'custom':
        lr_scheduler = LearningRateScheduler(steps_per_epoch=steps_per_train_epoch, max_epochs=cfg.training.max_epochs,
                                             milestones=cfg.training.lr_scheduler_milestones)
        callback_list.append(lr_scheduler)
    else:
        callback_list.append(LearningRateMonitor(logging_interval='epoch'))

    n_available = _log_hardware(logger)
    gpus = n_available if num_gpus < 0 else min(num_gpus, n_available)
    # ddp is only worth it with more than one card; a single GPU runs the plain loop
    accelerator = 'ddp' if gpus > 1 else None

    trainer = pl.Trainer(gpus=gpus, accelerator=accelerator, sync_batchnorm=gpus > 1,
                         precision=cfg.training.precision,
                         resume_from_checkpoint=resume_from_checkpoint,
                         max_epochs=cfg.training.max_epochs,
                         logger=tb_logger,
                         progress_bar_refresh_rate=2,
                         check_val_every_n_epoch=cfg.training.val_interval,
                         log_every_n_steps=100, flush_logs_every_n_steps=200,
                         limit_train_batches=cfg.data.train_fraction, limit_val_batches=cfg.data.val_fraction,
                         callbacks=callback_list)
    start_train_time = time.time()
    trainer.fit(model, datamodule)
    logger.info('Time to train model: {:.3f} s'.format(time.time() - start_train_time))

    # Test
    datamodule.setup(stage='test')
    trainer.test(ckpt_path='best' if cfg.training.val_interval else None, datamodule=datamodule)

    logger.info('Finish training experiment {}'.format(cfg.exp_name))


if __name__ == '__main__':
    fire.Fire(train)
