"""Entry points that start (possibly multi-GPU) training / evaluation for a BasicTS config.

A config is a python file that defines ``CFG`` (an ``EasyDict``).  The launcher

* makes only the requested GPUs visible (``gpus="0,1"``),
* checks that ``CFG.GPU_NUM`` matches the number of visible devices,
* spawns one process per GPU and joins them with NCCL when ``CFG.GPU_NUM > 1``,
* builds the runner given by ``CFG.RUNNER`` and calls ``runner.train(cfg)``.
"""

import os
import sys
import time
import random
import traceback
import importlib.util
from typing import Callable, Dict, Optional, Union

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from easydict import EasyDict

from .utils import get_logger, set_env_seed

__all__ = ['launch_training', 'launch_evaluation', 'init_cfg']

_DEFAULT_MASTER_ADDR = '127.0.0.1'
_DEFAULT_MASTER_PORT = '29500'


def init_cfg(cfg: Union[Dict, str], save: bool = False) -> EasyDict:
    """Load a config file (``baselines/STID/METR-LA.py``) or pass a dict through."""
    if isinstance(cfg, str):
        cfg_path = os.path.abspath(cfg)
        spec = importlib.util.spec_from_file_location('basicts_cfg', cfg_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cfg = module.CFG
        cfg['_CFG_PATH'] = cfg_path
    if not isinstance(cfg, EasyDict):
        cfg = EasyDict(cfg)
    cfg.setdefault('GPU_NUM', 1)
    cfg.setdefault('DIST_BACKEND', 'nccl')
    cfg.setdefault('DIST_INIT_METHOD', None)
    if save:
        ckpt_dir = cfg.TRAIN.get('CKPT_SAVE_DIR', 'checkpoints')
        os.makedirs(ckpt_dir, exist_ok=True)
    return cfg


def set_visible_devices(gpus: Optional[str]) -> int:
    """Restrict CUDA to ``gpus`` (e.g. ``"0,1"``) and return the number of usable devices."""
    if gpus is not None:
        os.environ['CUDA_VISIBLE_DEVICES'] = str(gpus).replace(' ', '')
    return torch.cuda.device_count()


def setup_env(cfg: EasyDict, local_rank: int = 0):
    env = cfg.get('ENV', EasyDict())
    seed = env.get('SEED', None)
    if seed is not None:
        # different ranks get different (but reproducible) seeds
        set_env_seed(seed + local_rank, deterministic=env.get('DETERMINISTIC', False))

    cudnn_cfg = env.get('CUDNN', EasyDict())
    torch.backends.cudnn.enabled = cudnn_cfg.get('ENABLED', True)
    torch.backends.cudnn.benchmark = cudnn_cfg.get('BENCHMARK', True)
    torch.backends.cudnn.deterministic = cudnn_cfg.get('DETERMINISTIC', False)

    if env.get('TF32', False):
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True


def init_dist(cfg: EasyDict, local_rank: int, world_size: int, node_rank: int = 0):
    rank = node_rank * cfg.GPU_NUM + local_rank
    os.environ.setdefault('MASTER_ADDR', _DEFAULT_MASTER_ADDR)
    os.environ.setdefault('MASTER_PORT', _DEFAULT_MASTER_PORT)
    torch.cuda.set_device(local_rank)
    dist.init_process_group(
        backend=cfg.DIST_BACKEND,
        init_method=cfg.DIST_INIT_METHOD or 'env://',
        world_size=world_size,
        rank=rank,
    )
    dist.barrier(device_ids=[local_rank])
    return rank


def _worker(local_rank: int, fn: Callable, cfg: EasyDict, world_size: int, node_rank: int):
    try:
        if world_size > 1:
            init_dist(cfg, local_rank, world_size, node_rank)
        elif torch.cuda.is_available():
            torch.cuda.set_device(local_rank)  # single process: local_rank == 0
        setup_env(cfg, local_rank)
        fn(cfg)
    except Exception:
        traceback.print_exc()
        raise
    finally:
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()


def training_func(cfg: EasyDict):
    logger = get_logger('BasicTS-launcher')
    logger.info('Initializing runner "{}"'.format(cfg.RUNNER))
    runner = cfg.RUNNER(cfg)
    runner.init_logger(logger_name='BasicTS-training', log_file_name='training_log')
    try:
        runner.train(cfg)
    except BaseException as e:
        runner.logger.error(traceback.format_exc())
        raise e


def evaluation_func(cfg: EasyDict, ckpt_path: str = None, batch_size: int = None, strict: bool = True):
    runner = cfg.RUNNER(cfg)
    runner.init_logger(logger_name='BasicTS-evaluation', log_file_name='evaluation_log')
    runner.load_model(ckpt_path=ckpt_path, strict=strict)
    runner.test_pipeline(cfg=cfg, save_metrics=True, save_results=True)


def launch_training(cfg: Union[Dict, str], gpus: Optional[str] = None, node_rank: int = 0):
    """Launch training.

    Args:
        cfg: config dict or path of the config file.
        gpus: visible GPU ids, e.g. "0" or "0,1,2,3" (``None`` keeps CUDA_VISIBLE_DEVICES as is).
        node_rank: rank of the current node for multi-node training.
    """
    logger = get_logger('BasicTS-launcher')
    logger.info('Launching BasicTS training.')
    cfg = init_cfg(cfg, save=True)

    num_visible = set_visible_devices(gpus)
    world_size = cfg.GPU_NUM * cfg.get('NODE_NUM', 1)

    if cfg.GPU_NUM == 0:
        logger.warning('GPU_NUM is 0, running on CPU (slow).')
        training_func(cfg)
        return
    if num_visible < cfg.GPU_NUM:
        raise RuntimeError('GPU_NUM = {} but only {} GPU(s) are visible (gpus="{}").'.format(
            cfg.GPU_NUM, num_visible, gpus))

    if world_size == 1:
        _worker(0, training_func, cfg, 1, node_rank)
    else:
        mp.spawn(_worker, args=(training_func, cfg, world_size, node_rank), nprocs=cfg.GPU_NUM, join=True)


def launch_evaluation(cfg: Union[Dict, str], ckpt_path: str, device_type: str = 'gpu', gpus: Optional[str] = None,
                      batch_size: Optional[int] = None):
    """Evaluate a trained checkpoint on the test split (single device)."""
    logger = get_logger('BasicTS-launcher')
    logger.info('Launching BasicTS evaluation.')
    cfg = init_cfg(cfg)
    if batch_size is not None:
        cfg.TEST.DATA.BATCH_SIZE = batch_size

    if device_type == 'gpu':
        set_visible_devices(gpus)
        cfg.GPU_NUM = 1
        torch.cuda.set_device(0)
    elif device_type == 'cpu':
        cfg.GPU_NUM = 0
    else:
        raise ValueError('Unknown device type: {}'.format(device_type))

    evaluation_func(cfg, ckpt_path, batch_size)


def _node_info_from_env() -> Dict[str, int]:
    """Read multi-node settings exported by the cluster scheduler (slurm / k8s)."""
    info = {'node_rank': 0, 'node_num': 1}
    if 'SLURM_NODEID' in os.environ:
        info['node_rank'] = int(os.environ['SLURM_NODEID'])
        info['node_num'] = int(os.environ.get('SLURM_NNODES', 1))
    elif 'NODE_RANK' in os.environ:
        info['node_rank'] = int(os.environ['NODE_RANK'])
        info['node_num'] = int(os.environ.get('NODE_NUM', 1))
    return info


def launch_runner(cfg: Union[Dict, str], fn: Callable, args: tuple = (), gpus: Optional[str] = None):
    """Run an arbitrary ``fn(cfg, runner, *args)`` with the same environment setup as training.

    Used by the scripts under ``scripts/`` (e.g. exporting predictions, computing model FLOPs).
    """
    cfg = init_cfg(cfg)
    num_visible = set_visible_devices(gpus)
    if cfg.GPU_NUM > 1:
        raise NotImplementedError('launch_runner only supports a single device')
    if cfg.GPU_NUM == 1 and num_visible == 0:
        raise RuntimeError('GPU_NUM = 1 but no GPU is visible.')
    setup_env(cfg)
    runner = cfg.RUNNER(cfg)
    runner.init_logger(logger_name='BasicTS-runner', log_file_name='runner_log')
    return fn(cfg, runner, *args)
