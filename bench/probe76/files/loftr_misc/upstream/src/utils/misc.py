import os
import contextlib
import joblib
from typing import Union
from loguru import _Logger, logger
from itertools import chain

import torch
from yacs.config import CfgNode as CN
from pytorch_lightning.utilities import rank_zero_only


def lower_config(yacs_cfg):
    if not isinstance(yacs_cfg, CN):
        return yacs_cfg
    return {k.lower(): lower_config(v) for k, v in yacs_cfg.items()}


def upper_config(dict_cfg):
    if not isinstance(dict_cfg, dict):
        return dict_cfg
    return {k.upper(): upper_config(v) for k, v in dict_cfg.items()}


def log_on(condition, message, level):
    if condition:
        assert level in ['INFO', 'DEBUG', 'WARNING', 'ERROR', 'CRITICAL']
        logger.log(level, message)


def get_rank_zero_only_logger(logger: _Logger):
    if rank_zero_only.rank == 0:
        return logger
    else:
        for _level in logger._core.levels.keys():
            level = _level.lower()
            setattr(logger, level,
                    lambda x: None)
        logger._log = lambda x: None
    return logger


def setup_gpus(gpus: Union[str, int]) -> int:
    """Work around the device parsing of pytorch-lightning 1.3.x.

    `--gpus=4` -> 4 processes, `--gpus=-1` -> every visible GPU,
    `--gpus=0,2,3` -> restrict this process tree to GPUs 0, 2 and 3.
    """
    spec = str(gpus).strip()
    if ',' not in spec:
        count = int(spec)
        return torch.cuda.device_count() if count == -1 else count

    requested = [tok.strip() for tok in spec.split(',') if tok.strip()]
    current = os.environ.get('CUDA_VISIBLE_DEVICES')
    if current is None:
        os.environ['CUDA_DEVICE_ORDER'] = 'PCI_BUS_ID'
        os.environ['CUDA_VISIBLE_DEVICES'] = ','.join(requested)
        logger.warning(f'[setup_gpus] restricting training to devices {",".join(requested)} '
                       '(exported CUDA_VISIBLE_DEVICES)')
    else:
        logger.warning(f'[setup_gpus] CUDA_VISIBLE_DEVICES={current} was set by the user or the '
                       'parent process; leaving it untouched')
    return len(requested)


def flattenList(x):
    return list(chain(*x))


@contextlib.contextmanager
def tqdm_joblib(tqdm_object):
    """Context manager to patch joblib to report into tqdm progress bar given as argument

    Usage:
        with tqdm_joblib(tqdm(desc="My calculation", total=10)) as progress_bar:
            Parallel(n_jobs=16)(delayed(sqrt)(i**2) for i in range(10))
    """
    class TqdmBatchCompletionCallback(joblib.parallel.BatchCompletionCallBack):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)

        def __call__(self, *args, **kwargs):
            tqdm_object.update(n=self.batch_size)
            return super().__call__(*args, **kwargs)

    old_batch_callback = joblib.parallel.BatchCompletionCallBack
    joblib.parallel.BatchCompletionCallBack = TqdmBatchCompletionCallback
    try:
        yield tqdm_object
    finally:
        joblib.parallel.BatchCompletionCallBack = old_batch_callback
        tqdm_object.close()


def detect_NaN(feat_0, feat_1):
    logger.info(f'NaN detected in feature')
    logger.info(f"#NaN in feat_0: {torch.isnan(feat_0).int().sum()}, #NaN in feat_1: {torch.isnan(feat_1).int().sum()}")
    feat_0[feat_0 != feat_0] = 0
    feat_1[feat_1 != feat_1] = 0
    return feat_0, feat_1


def batch_to(batch, device, non_blocking=True):
    """Recursively move every tensor of a (nested) batch dict to `device`."""
    if isinstance(batch, torch.Tensor):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, dict):
        return {k: batch_to(v, device, non_blocking) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(batch_to(v, device, non_blocking) for v in batch)
    return batch
