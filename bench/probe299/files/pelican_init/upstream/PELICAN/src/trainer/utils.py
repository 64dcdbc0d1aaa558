import os
import sys
import random
import logging
import datetime
from math import inf, log, exp, sqrt

import numpy as np
import torch

logger = logging.getLogger(__name__)


#### Initialize parameters for training run ####

def init_argparse_fix(args):
    """
    Fixes args that depend on other args or that the user may have set inconsistently.
    """
    if args.task.startswith('eval'):
        args.load = True
        args.num_epoch = 0

    # Set a default number of workers
    if args.num_workers < 0:
        args.num_workers = max(1, min(8, os.cpu_count() // 2))

    if args.seed < 0:
        seed = int((datetime.datetime.now().timestamp() * 100000) % 1000000)
        logger.info('Setting seed based upon time: {}'.format(seed))
        args.seed = seed

    if args.lr_final is None:
        args.lr_final = args.lr_init / 10.
    return args


def init_cuda(args, device_id=-1):
    """
    Pick the device and the default dtype for the run.

    device_id >= 0 selects one GPU of a multi-GPU (distributed) run; -1 means "the default GPU".
    """
    if args.cuda and torch.cuda.is_available():
        if device_id < 0:
            device = torch.device('cuda')
        else:
            device = torch.device(f'cuda:{device_id}')
        logger.info('Beginning training on CUDA/GPU! Device: {}'.format(torch.cuda.get_device_name(device)))
        torch.cuda.init()
    else:
        if args.cuda:
            logger.warning('CUDA requested but not available, falling back to CPU!')
        logger.info('Beginning training on CPU!')
        device = torch.device('cpu')

    if args.dtype == 'double':
        dtype = torch.double
    elif args.dtype == 'float':
        dtype = torch.float
    else:
        raise ValueError('Incorrect data type chosen!')

    return device, dtype


def set_seed(seed, device_id=None):
    """
    Seed python, numpy and torch (CPU and CUDA) RNGs.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)
    logger.info('Setting all random seeds to {} (device_id={})'.format(seed, device_id))


def set_deterministic(enabled=True):
    """
    Reproducible runs for the paper tables: trade speed for determinism.
    """
    torch.backends.cudnn.deterministic = enabled
    torch.backends.cudnn.benchmark = not enabled
    if enabled:
        # required by some cuBLAS kernels when deterministic algorithms are requested
        os.environ.setdefault('CUBLAS_WORKSPACE_CONFIG', ':4096:8')
        torch.use_deterministic_algorithms(True, warn_only=True)


def get_world_size():
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_world_size()
    return 1


def get_rank():
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank()
    return 0


def is_master():
    return get_rank() == 0


def all_reduce_mean(value, device):
    """
    Average a python scalar over all ranks. Returns a python float.
    """
    if get_world_size() == 1:
        return float(value)
    t = torch.tensor([float(value)], dtype=torch.float64, device=device)
    torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.SUM)
    return (t / get_world_size()).item()


def logging_printout(args, trial=None):
    # Printouts of various inputs before training (and after logger is initialized with correct logfile path)
    logger.info('Initializing simulation based upon argument string:')
    logger.info(' '.join([arg for arg in sys.argv]))
    logger.info('Log, best, checkpoint, load files: {} {} {} {}'.format(args.logfile, args.bestfile, args.checkfile, args.loadfile))
    logger.info('Dataset, learning target, datadir: {} {} {}'.format(args.dataset, args.target, args.datadir))
    git_status = _git_version()

    if trial is not None:
        logger.info('Optuna trial number: {}'.format(trial.number))

    logger.info('Values of all model arguments:')
    logger.info('{}'.format(args))
    return git_status


def _git_version():
    from subprocess import run, PIPE
    git_dir = os.path.dirname(os.path.realpath(__file__))
    git_commit = run('git -C {} log --pretty=%h -n 1'.format(git_dir), shell=True, stdout=PIPE)
    git_commit = git_commit.stdout.decode().strip()
    git_status = run('git -C {} status --porcelain'.format(git_dir), shell=True, stdout=PIPE)
    git_status = git_status.stdout.decode().strip()
    if git_status:
        logger.info('Git status: {}-dirty'.format(git_commit))
    else:
        logger.info('Git status: {}'.format(git_commit))
    return git_commit


def gpu_memory_summary(device):
    """
    One-line summary of allocator state, appended to the per-epoch log line.
    """
    if device.type != 'cuda':
        return ''
    alloc = torch.cuda.memory_allocated(device) / 2 ** 30
    reserved = torch.cuda.memory_reserved(device) / 2 ** 30
    peak = torch.cuda.max_memory_allocated(device) / 2 ** 30
    return 'GPU mem: {:.2f}G alloc / {:.2f}G reserved / {:.2f}G peak'.format(alloc, reserved, peak)


#### Learning-rate helpers shared by the classifier and the mass regressor ####

def get_lr_lambda(args, num_data_batches):
    """
    Warmup + cosine/exponential decay expressed as a multiplicative factor of lr_init.
    """
    warmup = args.lr_warmup_epochs * num_data_batches
    total = args.num_epoch * num_data_batches
    lr_ratio = args.lr_final / args.lr_init

    def lr_lambda(step):
        if step < warmup:
            return (step + 1) / max(1, warmup)
        progress = min(1., (step - warmup) / max(1, total - warmup))
        if args.lr_decay_type == 'cos':
            return lr_ratio + 0.5 * (1 - lr_ratio) * (1 + np.cos(np.pi * progress))
        elif args.lr_decay_type == 'exp':
            return exp(progress * log(lr_ratio))
        elif args.lr_decay_type == 'warm':
            return 1.
        else:
            raise ValueError('Unknown lr decay type {}'.format(args.lr_decay_type))

    return lr_lambda


def expand_var_list(var):
    if type(var) is list:
        var_list = var
    elif var is None:
        var_list = []
    elif type(var) is int:
        var_list = [var]
    else:
        raise ValueError('Incorrect format for variable list {}'.format(var))
    return var_list
