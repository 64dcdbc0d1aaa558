import copy
import glob
import os
import os.path
import errno
import shutil
import random
import logging
import pickle
from logging import Logger
from typing import Callable, Optional

import numpy as np
import torch
import torch.distributed as dist
import yaml
from torch import nn, Tensor
from torch.utils.tensorboard import SummaryWriter


def neq_load_customized(model, pretrained_dict, verbose=False):
    ''' load pre-trained model in a not-equal way,
    when new model has been partially modified '''
    model_dict = model.state_dict()
    tmp = {}
    if verbose:
        print(list(model_dict.keys()))
        print('\n=======Check Weights Loading======')
        print('Weights not used from pretrained file:')
    for k, v in pretrained_dict.items():
        if k in model_dict and model_dict[k].shape == v.shape:
            tmp[k] = v
        else:
            if verbose:
                print(k)
    if verbose:
        print('---------------------------')
        print('Weights not loaded into new model:')
        for k, v in model_dict.items():
            if k not in pretrained_dict:
                print(k)
            elif model_dict[k].shape != pretrained_dict[k].shape:
                print(k, 'shape mis-matched, not loaded')
        print('===================================\n')

    del pretrained_dict
    model_dict.update(tmp)
    del tmp
    model.load_state_dict(model_dict)
    return model


def move_to_device(batch, device):
    """Recursively move every tensor of a (possibly nested) batch dict to `device`."""
    for k, v in batch.items():
        if type(v) == dict:
            batch[k] = move_to_device(v, device)
        elif type(v) == torch.Tensor:
            batch[k] = v.to(device)
        elif type(v) == list and len(v) > 0 and type(v[0]) == torch.Tensor:
            batch[k] = [e.to(device) for e in v]
    return batch


def make_model_dir(model_dir: str, overwrite: bool = False) -> str:
    """
    Create a new directory for the model.

    :param model_dir: path to model directory
    :param overwrite: whether to overwrite an existing directory
    :return: path to model directory
    """
    if is_main_process():
        if os.path.isdir(model_dir):
            if not overwrite:
                raise FileExistsError(
                    "Model directory exists and overwriting is disabled.")
            # delete previous directory to start with empty dir again
            shutil.rmtree(model_dir)
        os.makedirs(model_dir)
    return model_dir


def get_logger():
    return logger


def make_logger(model_dir: str, log_file: str = "train.log") -> Logger:
    """
    Create a logger for logging the training process.

    :param model_dir: path to logging directory
    :param log_file: path to logging file
    :return: logger object
    """
    global logger
    if is_main_process():
        logger = logging.getLogger(__name__)
        if not logger.handlers:
            logger.setLevel(level=logging.DEBUG)
            fh = logging.FileHandler("{}/{}".format(model_dir, log_file))
            fh.setLevel(level=logging.DEBUG)
            logger.addHandler(fh)
            formatter = logging.Formatter("%(asctime)s %(message)s")
            fh.setFormatter(formatter)
            sh = logging.StreamHandler()
            sh.setLevel(logging.INFO)
            sh.setFormatter(formatter)
            logging.getLogger("").addHandler(sh)
        return logger
    else:
        logger = logging.getLogger(__name__)
        logger.setLevel(level=logging.ERROR)
        return logger


def make_writer(model_dir):
    if is_main_process():
        writer = SummaryWriter(log_dir=os.path.join(model_dir, "tensorboard"))
    else:
        writer = None
    return writer


def log_cfg(cfg: dict, prefix: str = "cfg") -> None:
    """
    Write configuration to log.

    :param cfg: configuration to log
    :param prefix: prefix for logging
    """
    logger = get_logger()
    for k, v in cfg.items():
        if isinstance(v, dict):
            p = '.'.join([prefix, k])
            log_cfg(v, prefix=p)
        else:
            p = '.'.join([prefix, k])
            logger.info("{:34s} : {}".format(p, v))


def clones(module: nn.Module, n: int) -> nn.ModuleList:
    """
    Produce N identical layers. Transformer helper function.

    :param module: the module to clone
    :param n: clone this many times
    :return cloned modules
    """
    return nn.ModuleList([copy.deepcopy(module) for _ in range(n)])


def subsequent_mask(size: int) -> Tensor:
    """
    Mask out subsequent positions (to prevent attending to future positions)
    Transformer helper function.

    :param size: size of mask (2nd and 3rd dim)
    :return: Tensor with 0s and 1s of shape (1, size, size)
    """
    mask = np.triu(np.ones((1, size, size)), k=1).astype("uint8")
    return torch.from_numpy(mask) == 0


def set_seed(seed: int) -> None:
    """
    Set the random seed for modules torch, numpy and random.

    :param seed: random seed
    """
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def load_config(path="configs/default.yaml") -> dict:
    """
    Loads and parses a YAML configuration file.

    :param path: path to YAML configuration file
    :return: configuration dictionary
    """
    with open(path, "r", encoding="utf-8") as ymlfile:
        cfg = yaml.safe_load(ymlfile)
    if 'RecognitionNetwork' in cfg['model']:
        if 'keypoint' in cfg['data'].get('input_streams', ['rgb']):
            assert 'keypoint_s3d' in cfg['model']['RecognitionNetwork'] \
                or 'keypoint_resnet3d' in cfg['model']['RecognitionNetwork']
            from dataset.Dataset import get_keypoints_num
            keypoints_num = get_keypoints_num(
                keypoint_file=cfg['data']['keypoint_file'],
                use_keypoints=cfg['data']['use_keypoints'])
            if 'keypoint_s3d' in cfg['model']['RecognitionNetwork']:
                cfg['model']['RecognitionNetwork']['keypoint_s3d']['in_channel'] = keypoints_num
                print(f'Overwrite cfg.model.RecognitionNetwork.keypoint_s3d.in_channel -> {keypoints_num}')
    return cfg


def load_checkpoint(path: str, map_location: str = 'cpu') -> dict:
    """
    Load model from saved checkpoint.

    :param path: path to checkpoint
    :param map_location: where to map the tensors (checkpoints are always mapped to CPU first)
    :return: checkpoint (dict)
    """
    assert os.path.isfile(path), "Checkpoint %s not found" % path
    checkpoint = torch.load(path, map_location=map_location)
    return checkpoint


def symlink_update(target, link_name):
    try:
        os.symlink(target, link_name)
    except FileExistsError as e:
        if e.errno == errno.EEXIST:
            os.remove(link_name)
            os.symlink(target, link_name)
        else:
            raise e


def is_main_process():
    return 'WORLD_SIZE' not in os.environ or os.environ['WORLD_SIZE'] == '1' or os.environ['LOCAL_RANK'] == '0'


def init_DDP():
    """Initialise torch.distributed from the env vars set by torch.distributed.launch --use_env.

    One process per GPU; returns (local_rank, world_size, device).
    """
    local_rank = int(os.environ['LOCAL_RANK'])
    world_size = int(os.environ['WORLD_SIZE'])
    torch.cuda.set_device(local_rank)
    torch.distributed.init_process_group(backend='nccl', init_method='env://', world_size=world_size, rank=local_rank)
    device = torch.device('cuda:{}'.format(local_rank))
    return local_rank, world_size, device


def synchronize():
    if not dist.is_available():
        return
    if not dist.is_initialized():
        return
    world_size = dist.get_world_size()
    if world_size == 1:
        return
    dist.barrier()


def get_world_size():
    if not dist.is_available() or not dist.is_initialized():
        return 1
    return dist.get_world_size()


def all_gather(data):
    """
    Run all_gather on arbitrary picklable data (not necessarily tensors)
    Args:
        data: any picklable object
    Returns:
        list[data]: list of data gathered from each rank
    """
    world_size = get_world_size()
    if world_size == 1:
        return [data]

    # serialized to a Tensor
    buffer = pickle.dumps(data)
    storage = torch.ByteStorage.from_buffer(buffer)
    tensor = torch.ByteTensor(storage).to("cuda")

    # obtain Tensor size of each rank
    local_size = torch.LongTensor([tensor.numel()]).to("cuda")
    size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]
    dist.all_gather(size_list, local_size)
    size_list = [int(size.item()) for size in size_list]
    max_size = max(size_list)

    # receiving Tensor from all ranks
    # we pad the tensor because torch all_gather does not support
    # gathering tensors of different shapes
    tensor_list = []
    for _ in size_list:
        tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))
    if local_size != max_size:
        padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")
        tensor = torch.cat((tensor, padding), dim=0)
    dist.all_gather(tensor_list, tensor)

    data_list = []
    for size, tensor in zip(size_list, tensor_list):
        buffer = tensor.cpu().numpy().tobytes()[:size]
        data_list.append(pickle.loads(buffer))

    return data_list


def freeze_params(module: nn.Module) -> None:
    """
    Freeze the parameters of this module,
    i.e. do not update them during training

    :param module: freeze parameters of this module
    """
    for _, p in module.named_parameters():
        p.requires_grad = False


def get_latest_checkpoint(ckpt_dir: str) -> Optional[str]:
    """
    Returns the latest checkpoint (by time) from the given directory.
    If there is no checkpoint in this directory, returns None

    :param ckpt_dir:
    :return: latest checkpoint file
    """
    list_of_files = glob.glob("{}/*.ckpt".format(ckpt_dir))
    latest_checkpoint = None
    if list_of_files:
        latest_checkpoint = max(list_of_files, key=os.path.getctime)
    return latest_checkpoint
