import os
import json
import time
import random
from abc import ABC, abstractmethod

import numpy as np
import torch
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler, SequentialSampler
from torch.cuda.amp import GradScaler

from ..common import save_checkpoint, load_checkpoint
from ..ddp_utils import init_distributed_mode, is_main_process, get_world_size
from ..models import MODELS
from ..datasets import DATASETS
from ..transforms import TRANSFORMS
from ..optimizers import OPTIMIZERS
from ..lr_schedulers import LR_SCHEDULERS
from ..losses import LOSSES

# Keys every `train` section of a config is expected to carry; values are the defaults.
DEFAULT_TRAIN_CFG = dict(
    exp_name='baseline',
    workers=8,
    batch_size=8,
    checkpoint=None,
    # Device args
    world_size=0,
    dist_url='env://',
    device='cuda',
    val_num_steps=0,
    save_dir='./checkpoints',
    mixed_precision=False,
    seed=None,
)


def get_collate_fn(name):
    if name is None:
        return None
    from ..datasets.utils import dict_collate_fn
    if name == 'dict_collate_fn':
        return dict_collate_fn
    raise ValueError('Unknown collate_fn: {}'.format(name))


class BaseRunner(ABC):
    """Common bits of trainers and testers: config handling, seeding, device choice, checkpoints."""

    def __init__(self, cfg):
        self._cfg = cfg
        self._exp_dir = None
        self.model = None
        self.writer = None

    @staticmethod
    def update_cfg(defaults, **kwargs):
        cfg = dict(defaults)
        for k, v in kwargs.items():
            if v is not None:
                cfg[k] = v
        return cfg

    @staticmethod
    def set_seed(seed, deterministic=False):
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        if deterministic:
            torch.backends.cudnn.deterministic = True
            torch.backends.cudnn.benchmark = False
        else:
            torch.backends.cudnn.benchmark = True

    @staticmethod
    def get_device(cfg):
        # cfg['device'] is normally 'cuda'; fall back to CPU on machines without a GPU (debugging only)
        device = torch.device('cpu')
        if torch.cuda.is_available():
            device = torch.device(cfg['device'])
        return device

    def load_checkpoint(self, checkpoint, strict=True):
        if checkpoint is None:
            return 0, 0
        return load_checkpoint(net=self.model, optimizer=getattr(self, 'optimizer', None),
                               lr_scheduler=getattr(self, 'lr_scheduler', None), filename=checkpoint, strict=strict)

    def get_exp_dir(self):
        if self._exp_dir is None:
            self._exp_dir = os.path.join(self._cfg['save_dir'], self._cfg['exp_name'])
            if is_main_process():
                os.makedirs(self._exp_dir, exist_ok=True)
        return self._exp_dir

    def write_mp_log(self, log_file, content, append=True):
        # Only write on the main process (avoids duplicated lines under DDP)
        if not is_main_process():
            return
        with open(log_file, 'a' if append else 'w') as f:
            f.write(content)

    @abstractmethod
    def run(self, *args, **kwargs):
        pass


class BaseTrainer(BaseRunner):
    """Builds model, loss, optimizer, lr scheduler and the training data loader from a config dict."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self._cfg = self.update_cfg(DEFAULT_TRAIN_CFG, **cfg['train'])
        init_distributed_mode(self._cfg)
        if self._cfg['seed'] is not None:
            self.set_seed(self._cfg['seed'] + (self._cfg['rank'] if self._cfg['distributed'] else 0))
        self.device = self.get_device(self._cfg)
        print('Running on {} ({} process(es))'.format(self.device, get_world_size()))

        # Model
        self.model = MODELS.from_dict(cfg['model'])
        self.model.to(self.device)
        if self._cfg['distributed']:
            self.model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(self.model)
            self.model = torch.nn.parallel.DistributedDataParallel(self.model, device_ids=[self._cfg['gpu']],
                                                                   find_unused_parameters=cfg.get(
                                                                       'find_unused_parameters', False))

        # Loss, optimizer, scheduler
        self.criterion = LOSSES.from_dict(cfg['loss'])
        self.optimizer = OPTIMIZERS.from_dict(cfg['optimizer'], parameters=self.get_param_groups(cfg))
        self.dataloader = self.get_dataloader(cfg)
        self.lr_scheduler = LR_SCHEDULERS.from_dict(cfg['lr_scheduler'], optimizer=self.optimizer,
                                                    len_loader=len(self.dataloader))

        # Mixed precision: a GradScaler only when asked for
        self.scaler = GradScaler() if self._cfg['mixed_precision'] else None

        self.start_epoch, self.best_metric = self.load_checkpoint(self._cfg['checkpoint'], strict=True)

    def get_param_groups(self, cfg):
        model = self.model.module if self._cfg['distributed'] else self.model
        if 'parameters' not in cfg['optimizer']:
            return model.parameters()
        # e.g. a 10x learning rate for the lane head
        groups = []
        for name, group_cfg in cfg['optimizer']['parameters'].items():
            params = [p for n, p in model.named_parameters() if n.startswith(name)]
            groups.append(dict(params=params, **group_cfg))
        return groups

    def get_dataloader(self, cfg):
        transforms = TRANSFORMS.from_dict(cfg['train_augmentation'])
        dataset = DATASETS.from_dict(cfg['dataset'], transforms=transforms)
        if self._cfg['distributed']:
            sampler = DistributedSampler(dataset, shuffle=True)
        else:
            sampler = RandomSampler(dataset)
        collate_fn = get_collate_fn(cfg['dataset'].get('collate_fn'))
        return DataLoader(dataset=dataset,
                          batch_size=self._cfg['batch_size'],
                          collate_fn=collate_fn,
                          sampler=sampler,
                          num_workers=self._cfg['workers'],
                          pin_memory=True,
                          drop_last=True)

    def get_validation_dataloader(self, cfg):
        if 'validation_dataset' not in cfg:
            return None
        transforms = TRANSFORMS.from_dict(cfg['test_augmentation'])
        dataset = DATASETS.from_dict(cfg['validation_dataset'], transforms=transforms)
        sampler = SequentialSampler(dataset)
        return DataLoader(dataset=dataset,
                          batch_size=self._cfg['batch_size'],
                          sampler=sampler,
                          num_workers=self._cfg['workers'],
                          pin_memory=True)

    def save(self, epoch, metric=None, name='model.pt'):
        if not is_main_process():
            return
        save_checkpoint(net=self.model.module if self._cfg['distributed'] else self.model,
                        optimizer=self.optimizer,
                        lr_scheduler=self.lr_scheduler,
                        epoch=epoch,
                        metric=metric,
                        filename=os.path.join(self.get_exp_dir(), name))

    def log_memory(self, epoch, log_file):
        if self.device.type != 'cuda':
            return
        peak = torch.cuda.max_memory_allocated(self.device) / 1024 ** 3
        self.write_mp_log(log_file, 'epoch {}: peak memory {:.2f} GiB\n'.format(epoch, peak))
        torch.cuda.reset_peak_memory_stats(self.device)

    def dump_config(self, cfg):
        if not is_main_process():
            return
        with open(os.path.join(self.get_exp_dir(), 'cfg.json'), 'w') as f:
            json.dump(cfg, f, indent=2, default=str)


class BaseTester(BaseRunner):
    """Loads a checkpoint and runs inference over the test set (single process)."""

    def __init__(self, cfg, map_dataset_statics=None):
        super().__init__(cfg)
        self._cfg = self.update_cfg(DEFAULT_TRAIN_CFG, **cfg['test'])
        self.device = self.get_device(self._cfg)
        self.model = MODELS.from_dict(cfg['model'])
        self.model.to(self.device)
        self.load_checkpoint(self._cfg['checkpoint'], strict=True)
        self.model.eval()
        if map_dataset_statics is not None:
            for k in map_dataset_statics:
                self._cfg[k] = cfg['dataset'].get(k)

    def time_inference(self, input_sizes, n=100, warmup=10):
        """Quick latency estimate with random inputs (used by tools/profiling)."""
        x = torch.randn(1, 3, *input_sizes, device=self.device)
        with torch.no_grad():
            for _ in range(warmup):
                self.model(x)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(n):
                self.model(x)
            torch.cuda.synchronize(self.device)
        return (time.perf_counter() - t0) / n


class BaseVisualizer(BaseRunner):
    """Runs a model over images or a video and writes the drawn predictions (tools/vis/*)."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self._cfg = self.update_cfg(DEFAULT_TRAIN_CFG, **cfg['vis'])
        self.device = self.get_device(self._cfg)
        self.model = None
        if self._cfg.get('pred', False):
            self.model = MODELS.from_dict(cfg['model'])
            self.model.to(self.device)
            self.load_checkpoint(self._cfg['checkpoint'], strict=True)
            self.model.eval()
        self.transforms = TRANSFORMS.from_dict(cfg['test_augmentation'])
        self.writer_fourcc = self._cfg.get('fourcc', 'XVID')

    def get_loader(self, cfg):
        dataset = DATASETS.from_dict(cfg['vis_dataset'], transforms=self.transforms)
        return DataLoader(dataset=dataset,
                          batch_size=self._cfg['batch_size'],
                          collate_fn=get_collate_fn(cfg['vis_dataset'].get('collate_fn')),
                          num_workers=self._cfg['workers'],
                          shuffle=False)

    @torch.no_grad()
    def predict(self, images):
        images = images.to(self.device)
        if self._cfg.get('mixed_precision', False):
            with torch.autocast(device_type=self.device.type, dtype=torch.float16):
                return self.model(images)
        return self.model(images)

    def open_video_writer(self, path, fps, size):
        import cv2
        fourcc = cv2.VideoWriter_fourcc(*self.writer_fourcc)
        return cv2.VideoWriter(path, fourcc, fps, size)

    @abstractmethod
    def draw(self, images, results, filenames):
        pass

    def run(self, cfg):
        loader = self.get_loader(cfg)
        for images, filenames in loader:
            results = self.predict(images) if self.model is not None else None
            self.draw(images, results, filenames)
