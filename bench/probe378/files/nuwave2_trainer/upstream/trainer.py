from lightning_model import NuWave2
from omegaconf import OmegaConf as OC
import os
import argparse
import datetime
from glob import glob
import torch
from tqdm import tqdm
from pytorch_lightning import Trainer
from pytorch_lightning.callbacks import ModelCheckpoint, LearningRateMonitor
from pytorch_lightning.loggers import TensorBoardLogger
from pytorch_lightning.plugins import DDPPlugin
from pytorch_lightning.utilities.seed import seed_everything
from utils.tblogger import TensorBoardLoggerExpanded


def train(args):
    hparams = OC.load('hparameter.yaml')
    now = datetime.datetime.now().strftime('%m_%d_%H')
    hparams.name = f"{hparams.log.name}_{now}"
    os.makedirs(hparams.log.tensorboard_dir, exist_ok=True)
    os.makedirs(hparams.log.checkpoint_dir, exist_ok=True)
    model = NuWave2(hparams)
    tblogger = TensorBoardLoggerExpanded(hparams)
    ckpt_path = f'{hparams.log.name}_{now}_{{epoch}}'
    checkpoint_callback = ModelCheckpoint(dirpath=hparams.log.checkpoint_dir,
                                          filename=ckpt_path,
                                          verbose=True,
                                          save_last=True,
                                          save_top_k=3,
                                          monitor='val_loss',
                                          mode='min')
    lr_monitor = LearningRateMonitor(logging_interval='step')

    n_gpus = len(hparams.train.gpus)
    trainer = Trainer(
        checkpoint_callback=True,
        gpus=hparams.train.gpus,
        accelerator='ddp' if n_gpus > 1 else None,
        plugins=DDPPlugin(find_unused_parameters=False) if n_gpus > 1 else None,
        num_sanity_val_steps=1,
        resume_from_checkpoint=None if args.resume_from == None or args.restart else sorted(
            glob(os.path.join(hparams.log.checkpoint_dir, f'*_epoch={args.resume_from}.ckpt')))[-1],
        gradient_clip_val=hparams.train.gradient_clip,
        max_epochs=200000,
        logger=tblogger,
        progress_bar_refresh_rate=4,
        callbacks=[checkpoint_callback, lr_monitor],
        check_val_every_n_epoch=hparams.train.val_epoch,
        deterministic=False,
        benchmark=True,
    )
    if args.restart and args.resume_from is not None:
        ckpt = torch.load(
            sorted(glob(os.path.join(hparams.log.checkpoint_dir,
                                     f'*_epoch={args.resume_from}.ckpt')))[-1],
            map_location='cpu')
        ckpt_sd = ckpt['state_dict']
        sd = model.state_dict()
        for k, v in sd.items():
            if k in ckpt_sd:
                if ckpt_sd[k].shape == v.shape:
                    sd[k].copy_(ckpt_sd[k])
        model.load_state_dict(sd)
        model.global_step = ckpt['global_step']
        model.current_epoch = ckpt['epoch']
        del ckpt, ckpt_sd
    trainer.fit(model)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('-r',
                        '--resume_from',
                        type=int,
                        required=False,
                        help="Resume Checkpoint epoch number")
    parser.add_argument('-s',
                        '--restart',
                        action="store_true",
                        required=False,
                        help="Significant change occured, use this")
    parser.add_argument('-e',
                        '--ema',
                        action="store_true",
                        required=False,
                        help="Start from ema checkpoint")
    args = parser.parse_args()
    torch.backends.cudnn.benchmark = False
    seed_everything(1234)
    train(args)
