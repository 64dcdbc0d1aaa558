"""Sharding manager that moves the actor's weights from FSDP (training) into the colocated
vLLM engine (rollout) and back.

On __enter__: gather the FSDP state dict, load it into vLLM (resharding to vLLM's tensor
parallel layout), wake vLLM's KV cache, and switch the CUDA RNG to a per-DP-rank generation
stream. On __exit__: put vLLM to sleep, free its memory, restore the training RNG.
"""
import inspect
import logging
import os
import time
from typing import Dict, Iterable, Tuple

import torch
import torch.distributed
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.api import FullStateDictConfig, ShardedStateDictConfig, StateDictType

from verl.protocol import DataProto, all_gather_data_proto
from verl.utils.device import get_torch_device
from verl.utils.fsdp_utils import fsdp_version, load_fsdp_model_to_gpu, offload_fsdp_model_to_cpu

from .base import BaseShardingManager

logger = logging.getLogger(__file__)
logger.setLevel(os.getenv("VERL_LOGGING_LEVEL", "WARN"))


def log_gpu_memory_usage(head: str, level=logging.DEBUG, rank: int = 0):
    if (not torch.distributed.is_initialized()) or (rank is None) or torch.distributed.get_rank() == rank:
        allocated = torch.cuda.memory_allocated() / 1024 ** 3
        reserved = torch.cuda.memory_reserved() / 1024 ** 3
        logger.log(level, f"{head}, memory allocated (GB): {allocated:.2f}, memory reserved (GB): {reserved:.2f}")


class _Timer:
    def __init__(self, name: str):
        self.name = name

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        logger.info(f"{self.name}: {time.perf_counter() - self.t0:.3f}s")


class FSDPVLLMShardingManager(BaseShardingManager):
    def __init__(self, module: FSDP, inference_engine, model_config, full_params: bool = False,
                 device_mesh: DeviceMesh = None, offload_param: bool = False, layered_summon: bool = False):
        self.module = module
        self.inference_engine = inference_engine
        self.model_config = model_config
        self.device_mesh = device_mesh
        self.offload_param = offload_param
        self.layered_summon = layered_summon
        self.full_params = full_params
        if full_params and fsdp_version(self.module) == 1:
            FSDP.set_state_dict_type(self.module, state_dict_type=StateDictType.FULL_STATE_DICT,
                                     state_dict_config=FullStateDictConfig())
        elif fsdp_version(self.module) == 1:
            FSDP.set_state_dict_type(self.module, state_dict_type=StateDictType.SHARDED_STATE_DICT,
                                     state_dict_config=ShardedStateDictConfig())

        self.tp_size = self.device_mesh["infer_tp"].size()
        self.tp_rank = self.device_mesh["infer_tp"].get_local_rank()

        # a separate RNG stream for generation, one per data-parallel rank
        self.torch_random_states = torch.cuda.get_rng_state()
        if self.device_mesh is not None:
            gen_dp_rank = self.device_mesh["dp"].get_local_rank()
            torch.cuda.manual_seed(gen_dp_rank + 1000)
            self.gen_random_states = torch.cuda.get_rng_state()
            torch.cuda.set_rng_state(self.torch_random_states)
        else:
            self.gen_random_states = None

        self._pynccl = None
        if self.tp_size > 1 and os.environ.get("VERL_USE_PYNCCL_RESHARD", "1") == "1":
            from vllm.distributed import parallel_state as vllm_ps
            from vllm.distributed.device_communicators.pynccl import PyNcclCommunicator

            self._pynccl = PyNcclCommunicator(
                group=vllm_ps.get_tensor_model_parallel_group().cpu_group,
                device=torch.cuda.current_device(),
            )

    # ------------------------------------------------------------------ helpers
    def _model_runner(self):
        return self.inference_engine.llm_engine.model_executor.driver_worker.worker.model_runner

    def _gather_state_dict(self) -> Dict[str, torch.Tensor]:
        if self.offload_param:
            load_fsdp_model_to_gpu(self.module)
        params = self.module.state_dict()
        device = torch.cuda.current_device()
        out = {}
        for k, v in params.items():
            if hasattr(v, "full_tensor"):
                v = v.full_tensor()
            out[k.replace("_fsdp_wrapped_module.", "")] = v.to(device, non_blocking=True)
        return out

    def _iter_layered(self) -> Iterable[Tuple[str, torch.Tensor]]:
        for name, submodule in self.module.named_modules():
            if not name.endswith("layers") or not isinstance(submodule, torch.nn.ModuleList):
                continue
            for i, layer in enumerate(submodule):
                with FSDP.summon_full_params(layer, writeback=False):
                    for pname, p in layer.named_parameters():
                        yield f"{name}.{i}.{pname}", p.detach()

    def _reshard_broadcast(self, tensor: torch.Tensor) -> torch.Tensor:
        """Broadcast one tensor from TP rank 0 with the NCCL communicator vLLM already owns."""
        if self._pynccl is None:
            torch.distributed.broadcast(tensor, src=0)
            return tensor
        self._pynccl.broadcast(tensor, src=0, stream=torch.cuda.current_stream())
        return tensor

    # ------------------------------------------------------------------ context manager
    def __enter__(self):
        get_torch_device().empty_cache()
        log_gpu_memory_usage("Before state_dict() in sharding manager memory")
        with _Timer("gather state dict"):
            if self.layered_summon:
                weights = list(self._iter_layered())
            else:
                weights = list(self._gather_state_dict().items())
        log_gpu_memory_usage("After state_dict() in sharding manager memory")

        if "tags" in inspect.signature(self.inference_engine.wake_up).parameters:
            self.inference_engine.wake_up(tags=["weights"])
        else:
            self.inference_engine.wake_up()
        model = self._model_runner().model
        with _Timer("load weights"):
            loaded = model.load_weights(((name, self._reshard_broadcast(p)) for name, p in weights))
        logger.info(f"vLLM load weights, loaded_params: {len(loaded) if loaded else -1}")
        del weights
        if self.offload_param:
            offload_fsdp_model_to_cpu(self.module)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        if "tags" in inspect.signature(self.inference_engine.wake_up).parameters:
            self.inference_engine.wake_up(tags=["kv_cache"])
        log_gpu_memory_usage("After del state_dict and empty_cache in sharding manager")

        if self.device_mesh is not None:
            self.torch_random_states = torch.cuda.get_rng_state()  # save training RNG
            torch.cuda.set_rng_state(self.gen_random_states)

    def __exit__(self, exc_type, exc_value, traceback):
        self.inference_engine.sleep(level=1)
        self.module.train()
        get_torch_device().empty_cache()
        if self.device_mesh is not None:
            self.gen_random_states = torch.cuda.get_rng_state()  # keep the generation stream going
            torch.cuda.set_rng_state(self.torch_random_states)  # back to the training stream

    # ------------------------------------------------------------------ data
    def preprocess_data(self, data: DataProto) -> DataProto:
        if self.tp_size == 1:
            return data
        group = self.device_mesh["infer_tp"].get_group()
        all_gather_data_proto(data=data, process_group=group)
        return data

    def postprocess_data(self, data: DataProto) -> DataProto:
        if self.tp_size == 1:
            return data
        return data.chunk(chunks=self.tp_size)[self.tp_rank]
