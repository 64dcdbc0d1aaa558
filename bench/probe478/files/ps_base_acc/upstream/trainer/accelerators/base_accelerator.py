import abc
import hashlib
import json
import math
import os
import shutil
from dataclasses import dataclass, field
from enum import Enum
from glob import glob
from typing import Optional

import torch
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import LoggerType, set_seed
from omegaconf import OmegaConf, II
from tqdm import tqdm

logger = get_logger(__name__)


def debug(port):
    logger.info("Connecting to debugger...")
    import pydevd_pycharm
    pydevd_pycharm.settrace('localhost', port=port, stdoutToServer=True, stderrToServer=True)


class TrainingMode(Enum):
    SKIPPING = "skipping"
    TRAINING = "training"


class MetricMode(Enum):
    MAX = "max"
    MIN = "min"


class MixedPrecisionType(Enum):
    NO = "no"
    FP16 = "fp16"
    BF16 = "bf16"


class DynamoBackend(Enum):
    NO = "no"
    INDUCTOR = "inductor"


@dataclass
class DebugConfig:
    activate: bool = False
    port: int = 5900


@dataclass
class BaseAcceleratorConfig:
    _target_: str = "trainer.accelerators.base_accelerator.BaseAccelerator"
    output_dir: str = II("output_dir")
    mixed_precision: MixedPrecisionType = MixedPrecisionType.NO
    gradient_accumulation_steps: int = 1
    log_with: Optional[LoggerType] = LoggerType.WANDB
    debug: DebugConfig = field(default_factory=DebugConfig)
    seed: int = 42
    resume_from_checkpoint: bool = True
    max_steps: int = 4000
    num_epochs: int = 10
    validate_steps: int = 100
    eval_on_start: bool = True
    project_name: str = "reward"
    max_grad_norm: float = 1.0
    save_steps: int = 100
    metric_name: str = "accuracy"
    metric_mode: MetricMode = MetricMode.MAX
    limit_num_checkpoints: int = 3
    save_only_if_best: bool = True
    dynamo_backend: DynamoBackend = DynamoBackend.NO
    keep_best_ckpts: bool = True


class BaseAccelerator(abc.ABC):

    def __init__(self, cfg: BaseAcceleratorConfig):
        self.cfg = cfg
        self.accelerator = None
        self.epoch = 0
        self.step = 0
        self.global_step = 0
        self.step_loss = 0.0
        self.lr = None
        self.metrics = {}
        self.progress_bar = None
        self.mode = TrainingMode.TRAINING
        self.num_update_steps_per_epoch = None
        self.num_steps_per_epoch = None

    def post_init(self):
        self.set_seed()
        self.debug()
        self.dump_cfg()

    def set_seed(self):
        logger.info(f"Setting seed {self.cfg.seed}")
        set_seed(self.cfg.seed, device_specific=True)

    def debug(self):
        if self.accelerator.is_main_process and self.cfg.debug.activate:
            debug(self.cfg.debug.port)

    def dump_cfg(self):
        if not self.accelerator.is_main_process:
            return
        os.makedirs(self.cfg.output_dir, exist_ok=True)
        cfg_path = os.path.join(self.cfg.output_dir, "cfg.yaml")
        with open(cfg_path, "w") as f:
            f.write(OmegaConf.to_yaml(self.cfg))

    @abc.abstractmethod
    def init_trackers(self, cfg):
        pass

    def get_latest_checkpoint(self):
        all_ckpts = list(glob(os.path.join(self.cfg.output_dir, "checkpoint-*")))
        if len(all_ckpts) == 0:
            return
        all_ckpts.sort(key=os.path.getctime)
        if "final" in all_ckpts[-1]:
            all_ckpts.pop()
        return all_ckpts[-1]

    def load_state_if_needed(self):
        if not self.cfg.resume_from_checkpoint:
            return
        ckpt_path = self.get_latest_checkpoint()

        if ckpt_path is None:
            logger.info("No checkpoint found, training from scratch")
            return

        stage = json.load(open(os.path.join(ckpt_path, "training_stage.json")))
        self.epoch, self.step, self.global_step, self.metrics = (
            stage["epoch"], stage["step"], stage["global_step"], stage["metrics"])
        logger.info(f"Resuming from checkpoint: {ckpt_path} | epoch={self.epoch} step={self.step} gstep={self.global_step}")
        self.accelerator.load_state(ckpt_path)
        logger.info(f"Checkpoint loaded")

    def pre_training_log(self, cfg):
        total_batch_size = cfg.dataset.batch_size * self.accelerator.num_processes * self.cfg.gradient_accumulation_steps
        logger.info("***** Running training *****")
        logger.info(f"  Num examples = {self.num_steps_per_epoch * cfg.dataset.batch_size}")
        logger.info(f"  Num Epochs = {self.cfg.num_epochs}")
        logger.info(f"  Num GPUs = {self.accelerator.num_processes}")
        logger.info(f"  Instantaneous batch size per device = {cfg.dataset.batch_size}")
        logger.info(f"  Total train batch size (w. parallel, distributed & accumulation) = {total_batch_size}")
        logger.info(f"  Gradient Accumulation steps = {self.cfg.gradient_accumulation_steps}")
        logger.info(f"  Total optimization steps = {self.cfg.max_steps}")
        logger.info(f"  Mixed precision = {self.cfg.mixed_precision}")

    def init_training(self, cfg):
        self.pre_training_log(cfg)
        self.progress_bar = tqdm(range(self.cfg.max_steps), disable=not self.accelerator.is_main_process)
        self.progress_bar.update(self.global_step)
        self.progress_bar.set_description("Steps")

    def should_skip(self, epoch, step):
        should = epoch < self.epoch or (epoch == self.epoch and step < self.step)
        if should:
            self.mode = TrainingMode.SKIPPING
            self.progress_bar.set_postfix(**{"status": TrainingMode.SKIPPING})
        else:
            self.mode = TrainingMode.TRAINING
        return should

    def update_progbar_step(self):
        self.progress_bar.update(1)

    def log(self, data):
        if self.accelerator.is_main_process:
            self.accelerator.log(data, step=self.global_step)

    def recalc_train_length_after_prepare(self, num_batches):
        num_update_steps_per_epoch = math.ceil(num_batches / self.cfg.gradient_accumulation_steps)
        if self.cfg.max_steps is None:
            self.cfg.max_steps = self.cfg.num_epochs * num_update_steps_per_epoch
        self.num_update_steps_per_epoch = num_update_steps_per_epoch
        self.num_steps_per_epoch = num_batches
        self.cfg.num_epochs = math.ceil(self.cfg.max_steps / num_update_steps_per_epoch)

    def accumulate(self, model):
        return self.accelerator.accumulate(model)

    def gather(self, data):
        return self.accelerator.gather(data)

    @property
    def sync_gradients(self):
        return self.accelerator.sync_gradients

    def update_step_loss(self, loss):
        self.step_loss = loss

    def update_global_step(self, loss):
        self.global_step += 1
        self.log({
            "lr": self.lr,
            "step": self.step,
            "epoch": self.epoch,
            "global_step": self.global_step,
            "loss": loss,
            "max_mem_gb": torch.cuda.max_memory_allocated() / 2 ** 30,
        })

    def get_allocated_cuda_memory(self):
        return round(torch.cuda.max_memory_allocated() / 1024 / 1024 / 1024, 2)

    def update_step(self, loss, lr):
        self.step += 1
        self.lr = lr
        logs = {
            "stl": loss,
            "gstl": loss,
            "mem": self.get_allocated_cuda_memory(),
            "st": self.step,
            "ep": self.epoch,
            "gst": self.global_step,
            "lr": self.lr,
        }
        self.progress_bar.set_postfix(**logs)

    def update_epoch(self):
        if self.mode == TrainingMode.SKIPPING:
            return
        self.epoch += 1
        self.step = 0

    def update_metrics(self, metrics):
        self.metrics.update(metrics)
        self.log(metrics)

    def should_eval(self):
        if self.mode == TrainingMode.SKIPPING:
            return False
        if self.step == 0 and self.global_step == 0 and self.cfg.eval_on_start:
            return True
        if self.accelerator.sync_gradients and self.global_step % self.cfg.validate_steps == 0:
            return True
        return False

    def should_save(self):
        return self.accelerator.sync_gradients and self.global_step > 0 and \
            self.cfg.save_steps > 0 and self.global_step % self.cfg.save_steps == 0

    def should_end(self):
        return self.global_step >= self.cfg.max_steps

    def backward(self, loss):
        self.accelerator.backward(loss)

    def clip_grad_norm_(self, params):
        self.accelerator.clip_grad_norm_(params, self.cfg.max_grad_norm)

    def unwrap_and_save(self, model):
        unwrapped = self.accelerator.unwrap_model(model)
        self.accelerator.save_model(unwrapped, os.path.join(self.cfg.output_dir, "final"))

    def cleanup_checkpoints(self):
        ckpts = sorted(glob(os.path.join(self.cfg.output_dir, "checkpoint-*")), key=os.path.getctime)
        if len(ckpts) <= self.cfg.limit_num_checkpoints:
            return
        for ckpt in ckpts[:-self.cfg.limit_num_checkpoints]:
            logger.info(f"Deleting old checkpoint {ckpt}")
            shutil.rmtree(ckpt, ignore_errors=True)

    def save_checkpoint(self):
        self.accelerator.wait_for_everyone()
        if self.cfg.save_only_if_best:
            all_ckpts = glob(os.path.join(self.cfg.output_dir, "checkpoint-*"))
            best_metric = None
            for ckpt in all_ckpts:
                stage = json.load(open(os.path.join(ckpt, "training_stage.json")))
                metric = stage["metrics"].get(self.cfg.metric_name)
                if metric is None:
                    continue
                if best_metric is None or \
                        (self.cfg.metric_mode == MetricMode.MAX and metric > best_metric) or \
                        (self.cfg.metric_mode == MetricMode.MIN and metric < best_metric):
                    best_metric = metric
            current = self.metrics.get(self.cfg.metric_name)
            if best_metric is not None and current is not None:
                if (self.cfg.metric_mode == MetricMode.MAX and current <= best_metric) or \
                        (self.cfg.metric_mode == MetricMode.MIN and current >= best_metric):
                    logger.info(f"Not saving, {self.cfg.metric_name}={current} is not better than {best_metric}")
                    return
        save_dir = os.path.join(self.cfg.output_dir, f"checkpoint-gstep{self.global_step}")
        self.accelerator.save_state(save_dir)
        if self.accelerator.is_main_process:
            json.dump({
                "epoch": self.epoch,
                "step": self.step,
                "global_step": self.global_step,
                "metrics": self.metrics,
            }, open(os.path.join(save_dir, "training_stage.json"), "w"), indent=4)
            self.cleanup_checkpoints()
        logger.info(f"Saved checkpoint to {save_dir}")
        self.accelerator.wait_for_everyone()

    def prepare(self, *args, device_placement=None):
        return self.accelerator.prepare(*args, device_placement=device_placement)

    @property
    def device(self):
        return self.accelerator.device

    @property
    def is_main_process(self):
        return self.accelerator.is_main_process

    @property
    def num_processes(self):
        return self.accelerator.num_processes

    @property
    def mixed_precision(self):
        return self.accelerator.mixed_precision

    @property
    def gradient_state(self):
        return self.accelerator.gradient_state

    def end_training(self):
        self.accelerator.end_training()

    def wait_for_everyone(self):
        self.accelerator.wait_for_everyone()

    def print(self, *args, **kwargs):
        self.accelerator.print(*args, **kwargs)
