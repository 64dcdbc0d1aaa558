# Copyright 2020, Sophos Limited. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License").

import os
import random
import sys
import time
from collections import defaultdict

import baker
import numpy as np
import torch
from logzero import logger

import config
from dataset import Dataset, get_generator
from nets import PENetwork, compute_loss


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def describe_device(device):
    if str(device).startswith('cuda'):
        idx = torch.device(device).index or 0
        props = torch.cuda.get_device_properties(idx)
        return '{} ({:.1f} GB, sm_{}{})'.format(props.name, props.total_memory / 2 ** 30, props.major, props.minor)
    return str(device)


@baker.command
def train_network(train_db_path=config.db_path,
                  checkpoint_dir=config.checkpoint_dir if hasattr(config, 'checkpoint_dir') else './checkpoints',
                  max_epochs=config.epochs,
                  use_malicious_labels=True,
                  use_count_labels=True,
                  use_tag_labels=True,
                  feature_dimension=2381,
                  random_seed=None,
                  workers=None,
                  remove_missing_features='scan'):
    """
    Train a feed-forward neural network on EMBER 2.0 features, optionally with additional targets as
    described in the ALOHA paper (https://arxiv.org/abs/1903.05700).  SMART tags based on
    (https://arxiv.org/abs/1905.06262)

    :param train_db_path: Path in which the meta.db is stored; defaults to the value specified in `config.py`
    :param checkpoint_dir: Directory in which to save model checkpoints; WARNING -- this will overwrite any existing checkpoints without warning.
    :param max_epochs: How many epochs to train for; defaults to 10
    :param use_malicious_labels: Whether or not to use malware/benignware labels as a target; defaults to True
    :param use_count_labels: Whether or not to use the counts as an additional target; defaults to True
    :param use_tag_labels: Whether or not to use SMART tags as additional targets; defaults to True
    :param feature_dimension: The input dimension of the model; defaults to 2381 (EMBER 2.0 feature size)
    :param random_seed: if provided, seed random number generation with this value (defaults None, no seeding)
    :param workers: How many worker processes should the dataloader use (default None, use multiprocessing.cpu_count())
    :param remove_missing_features: Strategy for removing missing samples, with meta.db entries but no associated features, from the data (e.g. feature extraction failures).
      Must be one of: 'scan', 'none', or path to a missing keys file.
    """
    workers = workers if workers is None else int(workers)
    os.system('mkdir -p {}'.format(checkpoint_dir))
    if random_seed is not None:
        logger.info(f"Setting random seed to {int(random_seed)}.")
        set_seed(int(random_seed))
    logger.info('...instantiating network')
    model = PENetwork(use_malware=True, use_counts=True, use_tags=True, n_tags=len(Dataset.tags),
                      feature_dimension=feature_dimension).to(config.device)
    logger.info('training on {}'.format(describe_device(config.device)))
    opt = torch.optim.Adam(model.parameters())
    generator = get_generator(ds_root=train_db_path,
                              mode='train',
                              use_malicious_labels=use_malicious_labels,
                              use_count_labels=use_count_labels,
                              use_tag_labels=use_tag_labels,
                              num_workers=workers,
                              remove_missing_features=remove_missing_features)
    val_generator = get_generator(ds_root=train_db_path,
                                  mode='validation',
                                  use_malicious_labels=use_malicious_labels,
                                  use_count_labels=use_count_labels,
                                  use_tag_labels=use_tag_labels,
                                  num_workers=workers,
                                  remove_missing_features=remove_missing_features)
    steps_per_epoch = len(generator)
    val_steps_per_epoch = len(val_generator)
    for epoch in range(1, max_epochs + 1):
        loss_histories = defaultdict(list)
        model.train()
        t0 = time.time()
        for i, (features, labels) in enumerate(generator):
            opt.zero_grad()
            features = features.to(config.device, non_blocking=True)
            out = model(features)
            loss_dict = compute_loss(out, labels)
            loss = loss_dict['total']
            loss.backward()
            opt.step()
            for k in loss_dict.keys():
                if k == 'total':
                    loss_histories[k].append(deepcopy_float(loss_dict[k]))
                else:
                    loss_histories[k].append(loss_dict[k])
            print("Epoch {} {}/{}".format(epoch, i + 1, steps_per_epoch), end=' | ')
            for key, value in loss_histories.items():
                print("{}: {:.4f}".format(key, np.mean(value)), end=' | ')
            print("\r", end='', flush=True)
        print()
        logger.info('epoch {} took {:.1f}s'.format(epoch, time.time() - t0))
        torch.save(model.state_dict(), os.path.join(checkpoint_dir, "epoch_{}.pt".format(str(epoch))))
        print()
        loss_histories = defaultdict(list)
        model.eval()
        for i, (features, labels) in enumerate(val_generator):
            features = features.to(config.device, non_blocking=True)
            with torch.no_grad():
                out = model(features)
            loss_dict = compute_loss(out, labels)
            loss = loss_dict['total']
            for k in loss_dict.keys():
                if k == 'total':
                    loss_histories[k].append(deepcopy_float(loss_dict[k]))
                else:
                    loss_histories[k].append(loss_dict[k])
            print("Validation {}/{}".format(i + 1, val_steps_per_epoch), end=' | ')
            for key, value in loss_histories.items():
                print("{}: {:.4f}".format(key, np.mean(value)), end=' | ')
            print("\r", end='', flush=True)
        print()
    print('...done')


def deepcopy_float(t):
    return float(t.detach().cpu().item())


if __name__ == '__main__':
    baker.run()
