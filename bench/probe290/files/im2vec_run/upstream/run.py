import argparse
import os

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import yaml
from pytorch_lightning import Trainer
from pytorch_lightning.callbacks import ModelCheckpoint
from pytorch_lightning.loggers import TestTubeLogger

from experiment import VAEXperiment
from models import *

parser = argparse.ArgumentParser(description='Generic runner for VAE models')
parser.add_argument('--config', '-c',
                    dest="filename",
                    metavar='FILE',
                    help='path to the config file',
                    default='configs/vae.yaml')
parser.add_argument('--gpus', type=str, default=None,
                    help='comma separated GPU ids, overrides trainer_params.gpus (e.g. "0,1")')
parser.add_argument('--resume', type=str, default=None, help='checkpoint to resume from')

args = parser.parse_args()
with open(args.filename, 'r') as file:
    try:
        config = yaml.safe_load(file)
    except yaml.YAMLError as exc:
        print(exc)

tt_logger = TestTubeLogger(
    save_dir=config['logging_params']['save_dir'],
    name=config['logging_params']['name'],
    debug=False,
    create_git_tag=False,
)

# For reproducibility
torch.manual_seed(config['logging_params']['manual_seed'])
np.random.seed(config['logging_params']['manual_seed'])
cudnn.deterministic = True
cudnn.benchmark = False

model = vae_models[config['model_params']['name']](**config['model_params'])
experiment = VAEXperiment(model,
                          config['exp_params'])

if args.resume is not None:
    # checkpoints were written from the training GPUs
    ckpt = torch.load(args.resume)
    experiment.load_state_dict(ckpt['state_dict'])

trainer_params = dict(config['trainer_params'])
gpus = trainer_params.pop('gpus', [0])
if args.gpus is not None:
    gpus = [int(g) for g in args.gpus.split(',')]
multi_gpu = isinstance(gpus, (list, tuple)) and len(gpus) > 1

checkpoint_callback = ModelCheckpoint(
    filepath=os.path.join(tt_logger.save_dir, tt_logger.name, 'checkpoints', '{epoch}-{val_loss:.4f}'),
    save_top_k=3,
    verbose=True,
    monitor='val_loss',
    mode='min',
)

runner = Trainer(default_save_path=f"{tt_logger.save_dir}",
                 min_nb_epochs=1,
                 logger=tt_logger,
                 log_save_interval=100,
                 train_percent_check=1.,
                 val_percent_check=1.,
                 num_sanity_val_steps=5,
                 early_stop_callback=False,
                 checkpoint_callback=checkpoint_callback,
                 gpus=gpus,
                 distributed_backend='ddp' if multi_gpu else None,
                 **trainer_params)

print(f"======= Training {config['model_params']['name']} on GPUs {gpus} =======")
runner.fit(experiment)
