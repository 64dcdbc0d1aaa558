from dataclasses import dataclass, field
from typing import Any, Dict

from accelerate import Accelerator
from accelerate.utils import DeepSpeedPlugin, PrecisionType, LoggerType
from omegaconf import OmegaConf, MISSING, II

from trainer.accelerators.base_accelerator import BaseAcceleratorConfig, BaseAccelerator


@dataclass
class DeepSpeedConfig:
    fp16: Dict[str, Any] = field(default_factory=lambda: {
        "enabled": "auto",
        "loss_scale": 0,
        "loss_scale_window": 1000,
        "initial_scale_power": 16,
        "hysteresis": 2,
        "min_loss_scale": 1,
    })
    bf16: Dict[str, Any] = field(default_factory=lambda: {
        "enabled": "auto",
    })
    optimizer: Dict[str, Any] = field(default_factory=lambda: {
        "type": "AdamW",
        "params": {
            "lr": "auto",
            "weight_decay": "auto",
            "torch_adam": True,
            "adam_w_mode": True,
        },
    })
    scheduler: Dict[str, Any] = field(default_factory=lambda: {
        "type": "WarmupDecayLR",
        "params": {
            "warmup_min_lr": "auto",
            "warmup_max_lr": "auto",
            "warmup_num_steps": "auto",
            "total_num_steps": "auto",
        },
    })
    zero_optimization: Dict[str, Any] = field(default_factory=lambda: {
        "stage": 2,
        "allgather_partitions": True,
        "allgather_bucket_size": 2e8,
        "overlap_comm": True,
        "reduce_scatter": True,
        "reduce_bucket_size": 500000000,
        "contiguous_gradients": True,
    })
    gradient_accumulation_steps: int = 16
    gradient_clipping: float = 1.0
    steps_per_print: int = 2000
    train_batch_size: str = "auto"
    train_micro_batch_size_per_gpu: str = "auto"
    wall_clock_breakdown: bool = False


@dataclass
class DeepSpeedAcceleratorConfig(BaseAcceleratorConfig):
    _target_: str = "trainer.accelerators.deepspeed_accelerator.DeepSpeedAccelerator"
    deepspeed: DeepSpeedConfig = field(default_factory=DeepSpeedConfig)
    deepspeed_final: Any = None


class DeepSpeedAccelerator(BaseAccelerator):
    def __init__(self, cfg: DeepSpeedAcceleratorConfig):
        super().__init__(cfg)
        self.set_mixed_precision()
        deepspeed_plugin = DeepSpeedPlugin(
            hf_ds_config=OmegaConf.to_container(self.cfg.deepspeed, resolve=True),
            gradient_accumulation_steps=self.cfg.gradient_accumulation_steps,
        )
        self.accelerator = Accelerator(
            deepspeed_plugin=deepspeed_plugin,
            mixed_precision=self.cfg.mixed_precision.value,
            log_with=self.cfg.log_with,
            project_dir=self.cfg.output_dir,
            dynamo_backend=self.cfg.dynamo_backend.value,
        )
        self.cfg.deepspeed_final = self.accelerator.state.deepspeed_plugin.deepspeed_config
        self.post_init()

    def set_mixed_precision(self):
        if self.cfg.mixed_precision.value == PrecisionType.BF16:
            self.cfg.deepspeed.bf16["enabled"] = True
            self.cfg.deepspeed.fp16["enabled"] = False
        elif self.cfg.mixed_precision.value == PrecisionType.FP16:
            self.cfg.deepspeed.fp16["enabled"] = True
            self.cfg.deepspeed.bf16["enabled"] = False
        else:
            self.cfg.deepspeed.fp16["enabled"] = False
            self.cfg.deepspeed.bf16["enabled"] = False

    def prepare(self, *args, device_placement=None):
        prepared = self.accelerator.prepare(*args, device_placement=device_placement)
        for obj in prepared:
            if hasattr(obj, "gradient_checkpointing_enable"):
                obj.gradient_checkpointing_enable()
        return prepared

    def init_trackers(self, cfg):
        if self.accelerator.is_main_process:
            self.accelerator.init_trackers(
                self.cfg.project_name,
                config=OmegaConf.to_container(cfg, resolve=True),
            )
