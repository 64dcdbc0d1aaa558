import os
import random

import numpy as np
import torch

from trainer import Trainer
from config import get_config
from data_loader import get_train_loader, get_test_loader


def prepare_dirs(config):
    for path in [config.ckpt_dir, config.logs_dir]:
        if not os.path.exists(path):
            os.makedirs(path)


def set_seed(seed, use_gpu):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if use_gpu:
        torch.cuda.manual_seed_all(seed)


def main(config):
    # ensure directories are setup
    prepare_dirs(config)

    # ensure reproducibility
    set_seed(config.random_seed, config.use_gpu)
    kwargs = {}
    if config.use_gpu:
        torch.backends.cudnn.enabled = True
        torch.backends.cudnn.benchmark = not config.deterministic
        torch.backends.cudnn.deterministic = config.deterministic
        kwargs = {'num_workers': config.num_workers, 'pin_memory': config.pin_memory}

    # instantiate data loaders
    if config.is_train:
        data_loader = get_train_loader(
            config.data_dir, config.batch_size,
            config.random_seed, config.shuffle,
            is_load_label=True,
            **kwargs
        )
    else:
        data_loader = get_test_loader(
            config.data_dir, config.batch_size,
            is_shuffle=False,
            **kwargs
        )
    # instantiate trainer
    trainer = Trainer(config, data_loader)

    # either train
    if config.is_train:
        trainer.train()
    # or load a pretrained model and test
    else:
        trainer.test()


if __name__ == '__main__':
    config, unparsed = get_config()
    if unparsed:
        print('[!] ignoring unknown arguments:', unparsed)
    if config.use_gpu and not torch.cuda.is_available():
        print('[!] --use_gpu is set but no CUDA device is visible, falling back to CPU')
        config.use_gpu = False
    main(config)
