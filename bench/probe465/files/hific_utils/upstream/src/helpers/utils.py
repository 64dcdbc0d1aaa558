import os
import sys
import json
import time
import logging
import datetime
import collections
import itertools

import torch
import numpy as np
from collections import OrderedDict

from src.helpers.maths import lower_bound_toward
from default_config import args as default_args, directories

META_FILENAME = "metadata.json"


def get_device(is_gpu=True):
    """Return the correct device"""
    return torch.device("cuda" if torch.cuda.is_available() and is_gpu
                        else "cpu")


def quick_restore_model(model_path, device=None):
    """Restore a checkpoint for inference only."""
    if device is None:
        device = get_device()
    return load_model(model_path, logging.getLogger(), device, prediction=True)


def makedirs(directories):
    for dr in directories:
        if not os.path.exists(dr):
            os.makedirs(dr)


def get_scheduled_params(param, param_schedule, step_counter, ignore_schedule=False):
    # e.g. schedule = dict(vals=[1., 0.1], steps=[N])
    # reduces param value by a factor of 0.1 after N steps
    if ignore_schedule is False:
        vals, steps = param_schedule['vals'], param_schedule['steps']
        assert(len(vals) == len(steps) + 1), f'Mispecified schedule! - {param_schedule}'
        idx = np.where(step_counter < np.array(steps + [step_counter + 1]))[0][0]
        param *= vals[idx]
    return param


def update_lr(args, optimizer, itr, logger):
    lr_schedule = args.lr_schedule
    steps = lr_schedule['steps']
    if itr in steps:
        for param_group in optimizer.param_groups:
            old_lr = param_group['lr']
            param_group['lr'] *= lr_schedule['vals'][steps.index(itr) + 1]
            logger.info(f'Updating learning rate {old_lr:.3e} -> {param_group["lr"]:.3e}')


def setup_generic_signature(args, special_info):
    time_signature = '{:%Y_%m_%d_%H:%M}'.format(datetime.datetime.now()).replace(':', '_')
    if args.name is not None:
        args.name = '{}_{}_{}'.format(args.name, special_info, time_signature)
    else:
        args.name = '{}_{}_{}_{}'.format(args.dataset, args.model_type, special_info, time_signature)

    print(args.name)
    args.snapshot = os.path.join('experiments', args.name)
    args.checkpoints_save = os.path.join(args.snapshot, 'checkpoints')
    args.figures_save = os.path.join(args.snapshot, 'figures')
    args.storage_save = os.path.join(args.snapshot, 'storage')
    args.tensorboard_runs = os.path.join(args.snapshot, 'tensorboard')

    makedirs([args.snapshot, args.checkpoints_save, args.figures_save,
              args.storage_save, args.tensorboard_runs])

    return args


def save_metadata(metadata, directory='results', filename=META_FILENAME, **kwargs):
    """ Save the metadata of a training directory.
    Parameters
    ----------
    metadata:
        Object to save
    directory: string
        Path to folder where to save model. For example './experiments/runX'.
    kwargs:
        Additional arguments to `json.dump`
    """
    makedirs([directory])
    path_to_metadata = os.path.join(directory, filename)

    with open(path_to_metadata, 'w') as f:
        json.dump(metadata, f, indent=4, sort_keys=True)  # , **kwargs)


def save_model(model, optimizers, mean_epoch_loss, epoch, device, args, logger, multigpu=False):

    directory = args.checkpoints_save
    makedirs([directory])
    model.cpu()  # Move model parameters to CPU for consistency when restoring

    args_d = dict((n, getattr(args, n)) for n in dir(args) if not (n.startswith('__') or 'logger' in n))
    metadata = dict(image_dims=args.image_dims, epoch=epoch, steps=model.step_counter)
    metadata.update(args_d)
    timestamp = '{:%Y_%m_%d_%H:%M}'.format(datetime.datetime.now())
    args_path = os.path.join(directory, 'metadata/model_{}_metadata_{}.json'.format(args.name, timestamp))
    makedirs([os.path.join(directory, 'metadata')])

    if not os.path.isfile(args_path):
        with open(args_path, 'w') as f:
            json.dump(metadata, f, indent=4, sort_keys=True)

    model_name = args.name
    metadata_path = os.path.join(directory, 'metadata/model_{}_metadata.json'.format(model_name))
    save_metadata(metadata, directory=os.path.dirname(metadata_path), filename=os.path.basename(metadata_path))

    model_path = os.path.join(directory, '{}_epoch{}_idx{}_{:%Y_%m_%d_%H:%M}.pt'.format(model_name, epoch, model.step_counter, datetime.datetime.now()))

    if os.path.exists(model_path):
        model_path = os.path.join(directory, '{}_epoch{}_idx{}_{:%Y_%m_%d_%H:%M:%S}.pt'.format(model_name, epoch, model.step_counter, datetime.datetime.now()))

    save_dict = {
        'model_state_dict': model.module.state_dict() if args.multigpu is True else model.state_dict(),
        'compression_optimizer_state_dict': optimizers['amort'].state_dict(),
        'hyperprior_optimizer_state_dict': optimizers['hyper'].state_dict(),
        'epoch': epoch,
        'steps': model.step_counter,
        'args': args_d,
    }

    if model.use_discriminator is True:
        save_dict['discriminator_optimizer_state_dict'] = optimizers['disc'].state_dict()

    torch.save(save_dict, f=model_path)
    logger.info('Saved model at Epoch {}, step {} to {}'.format(epoch, model.step_counter, model_path))

    model.to(device)  # Move back to device
    return model_path


def load_model(save_path, logger, device, model_type=None, model_mode=None, current_args_d=None, prediction=True,
               strict=False, silent=False):

    start_time = time.time()
    from src.model import Model
    checkpoint = torch.load(save_path)
    loaded_args_d = checkpoint['args']

    args = Struct(**loaded_args_d)

    if current_args_d is not None:
        if silent is False:
            for k, v in current_args_d.items():
                try:
                    loaded_v = loaded_args_d[k]
                except KeyError:
                    logger.warning('Argument {} (value {}) not present in recorded arguments. Using current argument.'.format(k, v))
                    continue

                if loaded_v != v:
                    logger.warning('Current argument {} (value {}) does not match recorded argument (value {}). Recorded argument will be overriden.'.format(k, v, loaded_v))

        # HACK
        loaded_args_d.update(current_args_d)
        args = Struct(**loaded_args_d)

    if model_type is None:
        model_type = args.model_type
    if model_mode is None:
        model_mode = args.model_mode

    # Backward compatibility
    args.sample_noise = False
    args.noise_dim = 0

    model = Model(args, logger, model_type=model_type, model_mode=model_mode)

    # `strict` False if warmstarting
    model.load_state_dict(checkpoint['model_state_dict'], strict=strict)
    logger.info('Loading model {}'.format(save_path))
    logger.info('MODEL TYPE: {}'.format(model_type))
    logger.info('MODEL MODE: {}'.format(model_mode))
    logger.info(model)

    if prediction is True:
        model.eval()
        optimizers = None
    else:
        model.train()
        amortization_parameters = itertools.chain.from_iterable(
            [am.parameters() for am in model.amortization_models])
        hyperlatent_likelihood_parameters = model.Hyperprior.hyperlatent_likelihood.parameters()

        amortization_opt = torch.optim.Adam(amortization_parameters, lr=args.learning_rate)
        hyperlatent_likelihood_opt = torch.optim.Adam(hyperlatent_likelihood_parameters, lr=args.learning_rate)
        optimizers = dict(amort=amortization_opt, hyper=hyperlatent_likelihood_opt)

        if model.use_discriminator is True:
            discriminator_parameters = model.Discriminator.parameters()
            disc_opt = torch.optim.Adam(discriminator_parameters, lr=args.learning_rate)
            optimizers['disc'] = disc_opt

        optimizers['amort'].load_state_dict(checkpoint['compression_optimizer_state_dict'])
        optimizers['hyper'].load_state_dict(checkpoint['hyperprior_optimizer_state_dict'])
        if (model.use_discriminator is True) and ('disc' in optimizers.keys()):
            try:
                optimizers['disc'].load_state_dict(checkpoint['discriminator_optimizer_state_dict'])
            except KeyError:
                pass

    model.to(device)

    logger.info('Loaded model from {} in {:.3f} s'.format(save_path, time.time() - start_time))

    return args, model, optimizers


def logger_setup(logpath, filepath, package_files=[]):
    formatter = logging.Formatter('%(asctime)s %(levelname)s - %(funcName)s: %(message)s',
                                  "%H:%M:%S")
    logger = logging.getLogger(__name__)
    logger.setLevel('INFO'.upper())

    stream = logging.StreamHandler()
    stream.setLevel('INFO'.upper())
    stream.setFormatter(formatter)
    logger.addHandler(stream)

    info_file_handler = logging.FileHandler(logpath, mode="a")
    info_file_handler.setLevel('INFO'.upper())
    info_file_handler.setFormatter(formatter)
    logger.addHandler(info_file_handler)

    logger.info(filepath)

    with open(filepath, "r") as f:
        logger.info(f.read())

    for f in package_files:
        logger.info(f)
        with open(f, "r") as package_f:
            logger.info(package_f.read())

    return logger


class Struct:
    def __init__(self, **entries):
        self.__dict__.update(entries)

