import numpy as np
import yaml
import torch
from abc import ABC, abstractmethod

from os.path import join, exists, dirname, abspath
from os import makedirs
import logging

from ...utils import Config, make_dir

log = logging.getLogger(__name__)


class BasePipeline(ABC):
    """Base pipeline class."""

    def __init__(self,
                 model,
                 dataset=None,
                 device='cuda',
                 distributed=False,
                 **kwargs):
        """Initialize.

        Args:
            model: A network model.
            dataset: A dataset, or None for inference model.
            device: 'cuda' or 'cpu'.
            distributed: Whether to use multiple gpus.
            kwargs:

        Returns:
            class: The corresponding class.
        """
        self.cfg = Config(kwargs)

        if kwargs['name'] is None:
            raise KeyError("Please give a name to the pipeline")
        self.name = self.cfg.name

        self.model = model
        self.dataset = dataset
        self.rng = np.random.default_rng(kwargs.get('seed', None))

        self.distributed = distributed
        self.rank = kwargs.get('rank', 0)

        dataset_name = dataset.name if dataset is not None else ''
        self.cfg.log_dir = join(
            self.cfg.main_log_dir,
            model.__class__.__name__ + '_' + dataset_name + '_torch')
        if self.rank == 0:
            make_dir(self.cfg.main_log_dir)
            make_dir(self.cfg.log_dir)

        if device == 'cpu' or not torch.cuda.is_available():
            if distributed:
                raise NotImplementedError(
                    "Distributed training for CPU is not supported yet.")
            self.device = torch.device('cpu')
        else:
            if distributed:
                self.device = torch.device(device)
                print(f"Rank : {self.rank} using device : {self.device}")
                torch.cuda.set_device(self.device)
            else:
                self.device = torch.device('cuda')

        if self.device.type == 'cuda':
            # the KPConv / RandLA-Net neighbour ops have fixed shapes per config
            torch.backends.cudnn.benchmark = True

        self.summary = {}
        self.cfg.setdefault('summary', {})

    @abstractmethod
    def run_inference(self, data):
        """Run inference on a given data.

        Args:
            data: A raw data.

        Returns:
            Returns the inference results.
        """
        return

    @abstractmethod
    def run_test(self):
        """Run testing on test sets."""
        return

    @abstractmethod
    def run_train(self):
        """Run training on train sets."""
        return

    def log_memory(self, step):
        """Peak device memory, written next to the loss curves."""
        if self.device.type == 'cuda':
            peak = torch.cuda.max_memory_allocated(self.device) / 2**20
            log.info(f"step {step}: peak device memory {peak:.0f} MiB")

    def save_ckpt(self, epoch):
        if self.rank != 0:
            return
        path_ckpt = join(self.cfg.logs_dir, 'checkpoint')
        make_dir(path_ckpt)
        model = self.model.module if self.distributed else self.model
        torch.save(
            dict(epoch=epoch,
                 model_state_dict=model.state_dict(),
                 optimizer_state_dict=self.optimizer.state_dict(),
                 scheduler_state_dict=self.scheduler.state_dict()),
            join(path_ckpt, f'ckpt_{epoch:05d}.pth'))
        log.info(f'Epoch {epoch:3d}: save ckpt to {path_ckpt:s}')

    def load_ckpt(self, ckpt_path=None, is_resume=True):
        train_ckpt_dir = join(self.cfg.logs_dir, 'checkpoint')
        if self.rank == 0:
            make_dir(train_ckpt_dir)
        if self.distributed:
            torch.distributed.barrier()

        epoch = 0
        if ckpt_path is None:
            ckpt_path = latest_torch_ckpt(train_ckpt_dir)
            if ckpt_path is not None and is_resume:
                log.info('ckpt_path not given. Restore from the latest ckpt')
                epoch = int(re_epoch(ckpt_path)) + 1
            else:
                log.info('Initializing from scratch.')
                return epoch

        if not exists(ckpt_path):
            raise FileNotFoundError(f' ckpt {ckpt_path} not found')

        log.info(f'Loading checkpoint {ckpt_path}')
        ckpt = torch.load(ckpt_path, map_location=self.device)

        model = self.model.module if self.distributed else self.model
        model.load_state_dict(ckpt['model_state_dict'])
        if 'optimizer_state_dict' in ckpt and hasattr(self, 'optimizer'):
            log.info('Loading checkpoint optimizer_state_dict')
            self.optimizer.load_state_dict(ckpt['optimizer_state_dict'])
        if 'scheduler_state_dict' in ckpt and hasattr(self, 'scheduler'):
            log.info('Loading checkpoint scheduler_state_dict')
            self.scheduler.load_state_dict(ckpt['scheduler_state_dict'])
        return epoch


def latest_torch_ckpt(train_ckpt_dir):
    import glob
    files = glob.glob(join(train_ckpt_dir, 'ckpt_*.pth'))
    if len(files) == 0:
        return None
    return max(files, key=re_epoch)


def re_epoch(path):
    import re
    m = re.search(r'ckpt_(\d+)\.pth$', path)
    return int(m.group(1)) if m else -1
