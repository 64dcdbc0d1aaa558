import logging
import os
from abc import ABC, abstractmethod
from os.path import join

import numpy as np
import torch
import yaml

from ...utils import Config, make_dir

log = logging.getLogger(__name__)


def convert_device_name(device_type, device_ids):
    """Convert device to either cpu or cuda."""
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

    def __init__(self, model, dataset=None, device="cuda", distributed=False, **kwargs):
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

        if kwargs["name"] is None:
            raise KeyError("Please give a name to the pipeline")
        self.name = self.cfg.name

        self.model = model
        self.dataset = dataset
        self.rng = np.random.default_rng(kwargs.get("seed", None))

        self.distributed = distributed
        if self.distributed and self.cfg.get("main_log_dir") is not None:
            self.rank = torch.distributed.get_rank()
        else:
            self.rank = 0

        make_dir(self.cfg.main_log_dir)
        dataset_name = dataset.name if dataset is not None else ""
        self.cfg.logs_dir = join(self.cfg.main_log_dir,
                                 model.__class__.__name__ + "_" + dataset_name + "_torch")
        if self.rank == 0:
            make_dir(self.cfg.logs_dir)

        if device == "cpu" or not torch.cuda.is_available():
            if distributed:
                raise NotImplementedError(
                    "Distributed training for CPU is not supported yet.")
            self.device = torch.device("cpu")
        else:
            if distributed:
                self.device = torch.device(device)
                print(f"Rank : {self.rank} using device : {self.device}")
                torch.cuda.set_device(self.device)
            else:
                self.device = torch.device("cuda")

        self.summary = {}
        self.cfg.setdefault("summary", {})

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

    def load_ckpt(self, ckpt_path=None, is_resume=True):
        train_ckpt_dir = join(self.cfg.logs_dir, "checkpoint")
        if self.rank == 0:
            make_dir(train_ckpt_dir)
        if self.distributed:
            torch.distributed.barrier()

        epoch = 0
        if ckpt_path is None:
            ckpt_path = latest_torch_ckpt(train_ckpt_dir)
            if ckpt_path is not None and is_resume:
                log.info("ckpt_path not given. Restore from the latest ckpt")
                epoch = int(ckpt_path.split("_")[-1].split(".")[0]) + 1
            else:
                log.info("Initializing from scratch.")
                return epoch

        if not os.path.exists(ckpt_path):
            raise FileNotFoundError(f" ckpt {ckpt_path} not found")

        log.info(f"Loading checkpoint {ckpt_path}")
        ckpt = torch.load(ckpt_path, map_location=self.device)

        self.model.load_state_dict(ckpt["model_state_dict"])
        if "optimizer_state_dict" in ckpt and hasattr(self, "optimizer"):
            log.info("Loading checkpoint optimizer_state_dict")
            self.optimizer.load_state_dict(ckpt["optimizer_state_dict"])
        if "scheduler_state_dict" in ckpt and hasattr(self, "scheduler"):
            log.info("Loading checkpoint scheduler_state_dict")
            self.scheduler.load_state_dict(ckpt["scheduler_state_dict"])
        return epoch


def latest_torch_ckpt(train_ckpt_dir):
    files = os.listdir(train_ckpt_dir)
    ckpt_list = [f for f in files if f.endswith(".pth")]
    if len(ckpt_list) == 0:
        return None
    ckpt_list.sort()
    return join(train_ckpt_dir, ckpt_list[-1])


def setup_distributed(cfg_dict, device_ids, rank=0):
    """Called from scripts/run_pipeline.py once per spawned process."""
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(cfg_dict.get("port", 12355))
    device, device_ids = convert_device_name(cfg_dict.get("device", "cuda"), device_ids)
    world_size = len(device_ids)
    backend = cfg_dict.get("backend", "gloo" if device == "cpu" else "nccl")
    torch.distributed.init_process_group(backend, rank=rank, world_size=world_size)
    torch.cuda.set_device(device_ids[rank])
    log.info(f"process {rank} initialised, backend={backend}")
    return device, device_ids
