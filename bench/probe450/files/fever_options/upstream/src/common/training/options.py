import os
import torch

from common.util.log_helper import LogHelper


def gpu():
    """True when a GPU should be used for the MLP baseline.

    Set CUDA_DEVICE=-1 to force CPU even if a GPU is visible.
    """
    return torch.cuda.is_available() and int(os.getenv("CUDA_DEVICE", 0)) >= 0


def gpu_id():
    return int(os.getenv("CUDA_DEVICE", 0))


def describe():
    logger = LogHelper.get_logger(__name__)
    if gpu():
        logger.info("Training on GPU {0}: {1}".format(gpu_id(), torch.cuda.get_device_name(gpu_id())))
    else:
        logger.info("Training on CPU")
