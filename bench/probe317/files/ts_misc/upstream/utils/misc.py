import copy
import glob
import os
import os.path
import errno
import shutil
import random
import logging
import pickle
import gzip
import numpy as np
from logging import Logger
import torch
import torch.distributed as dist
import yaml
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
        print('===================================\n')
    del pretrained_dict
    model_dict.update(tmp)
    del tmp
    model.load_state_dict(model_dict)
    return model


def move_to_device(batch, device):
    for k, v in batch.items():
        if type(v) == dict:
            batch[k] = move_to_device(v, device)
        elif type(v) == torch.Tensor:
            batch[k] = v.to(device)
        elif type(v) == list and type(v[0]) == torch.Tensor:
            batch[k] = [e.to(device) for e in v]
    return batch


def make_model_dir(model_dir: str, overwrite: bool = False) -> str:
    """
    Create a new directory for the model.

    :param model_dir: path to model directory
    :param overwrite: whether to overwrite an existing directory
    :return: path to model directory
    """
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
    logger = logging.getLogger(__name__)
    if not logger.handlers:
        logger.setLevel(level=logging.DEBUG)
        fh = logging.FileHandler(os.path.join(model_dir, log_file))
        fh.setLevel(level=logging.DEBUG)
        logger.addHandler(fh)
        formatter = logging.Formatter("%(asctime)s %(message)s")
        fh.setFormatter(formatter)
        if is_main_process():
            sh = logging.StreamHandler()
            sh.setLevel(logging.INFO)
            sh.setFormatter(formatter)
            logging.getLogger("").addHandler(sh)
    return logger


def make_writer(model_dir):
    if is_main_process():
        os.makedirs(os.path.join(model_dir, 'tensorboard'), exist_ok=True)
        writer = SummaryWriter(log_dir=os.path.join(model_dir, 'tensorboard'))
    else:
        writer = None
    return writer


def log_cfg(cfg: dict, prefix: str = "cfg") -> None:
    """
    Write configuration to log.

    :param cfg: configuration to log
    :param logger: logger that defines where log is written to
    :param prefix: prefix for logging
    """
    logger = get_logger()
    for k, v in cfg.items():
        if isinstance(v, dict):
            p = ".".join([prefix, k])
            log_cfg(v, prefix=p)
        else:
            p = ".".join([prefix, k])
            logger.info("{:34s} : {}".format(p, v))


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
        if 'keypoint_s3d' in cfg['model']['RecognitionNetwork']:
            assert cfg['data']['keypoint_file'] == cfg['model']['RecognitionNetwork']['keypoint_s3d']['keypoint_file']
            cfg['model']['RecognitionNetwork']['keypoint_s3d']['in_channel'] = 0  # placeholder, filled by dataset
    return cfg


def upd_MAE_ckpt_keys(ckpt):
    tmp = {}
    for k, v in ckpt.items():
        if 'module.' in k:
            k = k.replace('module.', '')
        tmp[k] = v
    return tmp


def load_dataset_file(filename):
    with gzip.open(filename, "rb") as f:
        loaded_object = pickle.load(f)
        return loaded_object


def init_DDP():
    local_rank = int(os.environ['LOCAL_RANK'])
    world_size = int(os.environ['WORLD_SIZE'])
    torch.cuda.set_device(local_rank)
    torch.distributed.init_process_group(backend='nccl', init_method='env://')
    torch.distributed.barrier()
    device = torch.device('cuda:{}'.format(local_rank))
    return local_rank, world_size, device


def is_main_process():
    return 'WORLD_SIZE' not in os.environ or os.environ['WORLD_SIZE'] == '1' or os.environ['LOCAL_RANK'] == '0'


def synchronize():
    torch.distributed.barrier()


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
    local_size = torch.tensor([tensor.numel()], device="cuda")
    size_list = [torch.tensor([0], device="cuda") for _ in range(world_size)]
    dist.all_gather(size_list, local_size)
    size_list = [int(size.item()) for size in size_list]
    max_size = max(size_list)

    # receiving Tensor from all ranks
    # we pad the tensor because torch all_gather does not support
    # gathering tensors of different shapes
    tensor_list = []
    for _ in size_list:
        tensor_list.append(torch.empty((max_size,), dtype=torch.uint8, device="cuda"))
    if local_size != max_size:
        padding = torch.empty(size=(max_size - local_size,), dtype=torch.uint8, device="cuda")
        tensor = torch.cat((tensor, padding), dim=0)
    dist.all_gather(tensor_list, tensor)

    data_list = []
    for size, tensor in zip(size_list, tensor_list):
        buffer = tensor.cpu().numpy().tobytes()[:size]
        data_list.append(pickle.loads(buffer))

    return data_list


def sliding_windows(video, window_size=16, stride=8):
    # video: T,C,H,W ; used by the isolated NLA-SLR head to cut clips
    T = video.shape[0]
    starts = list(range(0, max(T - window_size, 0) + 1, stride))
    if len(starts) == 0 or starts[-1] + window_size < T:
        starts.append(max(T - window_size, 0))
    clips = [video[s:s + window_size] for s in starts]
    return torch.stack(clips, dim=0)
