'''
VOCA: Voice Operated Character Animation - PyTorch port.
Training entry point: reads the config, builds the data handler / batcher and the VOCA model and trains it.
'''

import os
import glob
import shutil
import argparse
import logging
import random
import numpy as np
import torch

from config_parser import read_config, create_default_config
from utils.data_handler import DataHandler
from utils.batcher import Batcher
from utils.voca_model import VOCAModel
from utils.voca_trainer import VOCATrainer

logging.basicConfig(format='%(asctime)s %(levelname)s %(message)s', level=logging.INFO)
logger = logging.getLogger('voca')


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def main():
    parser = argparse.ArgumentParser(description='VOCA training (PyTorch)')
    parser.add_argument('--config', default='training_config.cfg', help='Path to the training config file')
    parser.add_argument('--checkpoint_dir', default=None, help='Override the checkpoint directory of the config')
    parser.add_argument('--resume', action='store_true', help='Resume from the latest checkpoint in checkpoint_dir')
    parser.add_argument('--seed', type=int, default=42)
    args = parser.parse_args()

    pkg_path, _ = os.path.split(os.path.realpath(__file__))
    init_config_fname = os.path.join(pkg_path, args.config)
    if not os.path.exists(init_config_fname):
        logger.info('Config not found %s' % init_config_fname)
        create_default_config(init_config_fname)

    config = read_config(init_config_fname)
    if args.checkpoint_dir is not None:
        config['checkpoint_dir'] = args.checkpoint_dir

    checkpoint_dir = config['checkpoint_dir']
    if os.path.exists(checkpoint_dir) and not args.resume:
        logger.info('Checkpoint folder already exists %s' % checkpoint_dir)
        if input('Press "q" to quit, "x" to erase existing folder, and any other key to continue training: ').lower() == 'x':
            shutil.rmtree(checkpoint_dir)
    if not os.path.exists(checkpoint_dir):
        os.makedirs(checkpoint_dir)

    config_fname = os.path.join(checkpoint_dir, 'config.pkl')
    if os.path.exists(config_fname) and args.resume:
        logger.info('Use existing config %s' % config_fname)
    else:
        with open(config_fname, 'wb') as fp:
            import pickle
            pickle.dump(config, fp)
            fp.close()

    set_seed(args.seed)

    if config['device'] == 'cuda':
        torch.cuda.set_device(config['gpu_id'])
        device = torch.device('cuda', config['gpu_id'])
        logger.info('Training on GPU %d (%s)' % (config['gpu_id'], torch.cuda.get_device_name(config['gpu_id'])))
    else:
        device = torch.device('cpu')
        logger.info('Training on CPU - this will be very slow')

    data_handler = DataHandler(config)
    batcher = Batcher(data_handler)

    model = VOCAModel(config, template_pca=data_handler.get_expression_basis()).to(device)
    trainer = VOCATrainer(config, model, batcher, device)
    if args.resume:
        ckpts = sorted(glob.glob(os.path.join(checkpoint_dir, 'checkpoints', '*.pt')))
        if len(ckpts) > 0:
            trainer.load_checkpoint(ckpts[-1])
    trainer.train()


if __name__ == '__main__':
    main()
