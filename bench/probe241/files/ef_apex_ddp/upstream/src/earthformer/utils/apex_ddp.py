"""Lightning strategy that wraps the model with NVIDIA apex DistributedDataParallel.

apex DDP with `delay_allreduce=True` was noticeably faster than torch DDP for the
cuboid transformer on 8x V100 / A100 (many small parameter tensors in the
relative position tables and global vectors).
"""
import logging
from typing import Any, Dict, List, Optional, Union

import torch
from pytorch_lightning.overrides import LightningDistributedModule
from pytorch_lightning.plugins.environments.cluster_environment import ClusterEnvironment
from pytorch_lightning.plugins.io.checkpoint_plugin import CheckpointIO
from pytorch_lightning.plugins.precision import PrecisionPlugin
from pytorch_lightning.strategies import DDPStrategy
from pytorch_lightning.utilities.rank_zero import rank_zero_info

try:
    from apex.parallel import DistributedDataParallel as ApexDistributedDataParallel
    _APEX_AVAILABLE = True
except ImportError:
    ApexDistributedDataParallel = None
    _APEX_AVAILABLE = False

log = logging.getLogger(__name__)


class ApexDDPStrategy(DDPStrategy):
    strategy_name = "apex_ddp"

    def __init__(
            self,
            accelerator: Optional["pl.accelerators.accelerator.Accelerator"] = None,
            parallel_devices: Optional[List[torch.device]] = None,
            cluster_environment: Optional[ClusterEnvironment] = None,
            checkpoint_io: Optional[CheckpointIO] = None,
            precision_plugin: Optional[PrecisionPlugin] = None,
            ddp_comm_state: Optional[object] = None,
            ddp_comm_hook: Optional[callable] = None,
            ddp_comm_wrapper: Optional[callable] = None,
            model_averaging_period: Optional[int] = None,
            delay_allreduce: bool = True,
            **kwargs: Union[Any, Dict[str, Any]],
    ) -> None:
        if not _APEX_AVAILABLE:
            raise ImportError("ApexDDPStrategy requires NVIDIA apex built with --cpp_ext --cuda_ext.")
        super(ApexDDPStrategy, self).__init__(
            accelerator=accelerator,
            parallel_devices=parallel_devices,
            cluster_environment=cluster_environment,
            checkpoint_io=checkpoint_io,
            precision_plugin=precision_plugin,
            ddp_comm_state=ddp_comm_state,
            ddp_comm_hook=ddp_comm_hook,
            ddp_comm_wrapper=ddp_comm_wrapper,
            model_averaging_period=model_averaging_period,
            **kwargs,
        )
        self.delay_allreduce = delay_allreduce

    def _setup_model(self, model: torch.nn.Module) -> ApexDistributedDataParallel:
        """Wraps the model into an apex DistributedDataParallel module."""
        rank_zero_info(f"Wrapping model with apex DDP (delay_allreduce={self.delay_allreduce})")
        return ApexDistributedDataParallel(module=model, delay_allreduce=self.delay_allreduce)

    def configure_ddp(self) -> None:
        log.detail(f"{self.__class__.__name__}: configuring ApexDistributedDataParallel")
        self.model = self._setup_model(LightningDistributedModule(self.model))
        self._register_ddp_hooks()

    @property
    def lightning_module(self):
        module = self.model
        if isinstance(module, ApexDistributedDataParallel):
            module = module.module
        if isinstance(module, LightningDistributedModule):
            module = module.module
        return module

    @classmethod
    def register_strategies(cls, strategy_registry: Dict) -> None:
        strategy_registry.register(
            cls.strategy_name,
            cls,
            description="apex DDP strategy with delay_allreduce",
        )
