import numpy as np
import yaml
import torch
import torch.distributed as dist
from abc import ABC, abstractmethod

from os.path import join, exists, dirname, abspath
import logging

from ...utils import Config, make_dir

log = logging.getLogger(__name__)


def convert_device_name(device_type, device_ids):
    """Convert device to either cpu or cuda.

    Args:
        device_type: "cpu", "gpu" or "cuda" as given on the command line or in
            the pipeline section of a config file.
        device_ids: list of device indices (strings or ints).

    Returns:
        Tuple of the canonical device name and the list of integer ids.
    """
    gpu_names = ["gpu", "cuda"]
    cpu_names = ["cpu"]
    if device_type not in cpu_names + gpu_names:
        raise KeyError("the device should either "
                       "be cuda or cpu but got {}".format(device_type))
    assert type(device_ids) is list
    device_ids_new = []
    for device in device_ids:
        device_ids_new.append(int(device))

    if device_type in gpu_names:
        return "cuda", device_ids_new
    else:
        return "cpu", device_ids_new


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
        if self.distributed and self.cfg.get('device', 'cuda') == 'cpu':
            raise NotImplementedError(
                "Distributed training for cpu is not supported yet.")

        if self.distributed:
            self.rank = dist.get_rank()
        else:
            self.rank = 0

        make_dir(self.cfg.main_log_dir)
        dataset_name = dataset.name if dataset is not None else ''
        self.cfg.logs_dir = join(
            self.cfg.main_log_dir,
            model.__class__.__name__ + '_' + dataset_name + '_torch')
        make_dir(self.cfg.logs_dir)

        if device == 'cpu' or not torch.cuda.is_available():
            if distributed:
                raise NotImplementedError(
                    "Distributed training for cpu is not supported yet.")
            self.device = torch.device('cpu')
        else:
            if distributed:
                self.device = torch.device(device)
                print(f"Rank : {self.rank} using device : {self.device}")
                torch.cuda.set_device(self.device)
            else:
                self.device = torch.device('cuda')

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

    def save_config(self, path):
        """Dump the merged pipeline/model/dataset config next to the logs."""
        cfg_dict = {
            'pipeline': dict(self.cfg),
            'model': dict(self.model.cfg),
            'dataset': dict(self.dataset.cfg) if self.dataset is not None else {},
        }
        with open(path, 'w') as f:
            yaml.safe_dump(cfg_dict, f, default_flow_style=False)
        log.info("Saved config to {}".format(path))

    def log_device_summary(self):
        """Log which accelerator this rank ended up on."""
        if self.device.type == 'cuda':
            props = torch.cuda.get_device_properties(self.device)
            log.info("Rank {} on {} ({:.1f} GiB)".format(
                self.rank, props.name, props.total_memory / 2**30))
        else:
            log.info("Rank {} on {}".format(self.rank, self.device))
