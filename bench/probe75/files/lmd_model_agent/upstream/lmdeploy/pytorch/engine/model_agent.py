# Copyright (c) OpenMMLab. All rights reserved.
import asyncio
import os
import socket
from datetime import timedelta
from typing import Any, Callable, Dict, List

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from lmdeploy.utils import get_logger

from ..adapter.adapter import AdapterWeightMap
from ..config import BackendConfig, CacheConfig, ModelConfig
from ..model_inputs import ModelInputs
from ..models.patch import add_adapters, build_patched_model, update_custom_module_map
from ..weight_loader.model_weight_loader import load_model_weights
from .cache_engine import CacheEngine

logger = get_logger('lmdeploy')

_PATCH_ARG_NAMES = ['context', 'use_origin']


def get_gpu_memory(device_id: int = None) -> int:
    """Returns the free and total physical memory of the GPU in bytes."""
    if device_id is None:
        device_id = torch.cuda.current_device()
    return torch.cuda.mem_get_info(device_id)


def _update_cache_config(model_config: ModelConfig,
                         cache_config: CacheConfig,
                         gpu_id: int = 0,
                         host_mem_size: int = 1 * (1 << 30),
                         world_size: int = 1):
    """Update the gpu mem and cpu mem according to model info.

    Args:
        model_config (ModelConfig): The config of the model.
        cache_config (CacheConfig): The config of the cache info.
        gpu_id (int): The GPU id to use.
    """

    def __get_runtime_size(num_free_gpu_mem: int, cache_block_size: int, vocal_size: int):
        """find best prefill num."""
        cache_max_entry_count = cache_config.cache_max_entry_count
        max_prefill_token_num = cache_config.max_prefill_token_num
        runtime_cache_size = 0
        while max_prefill_token_num > 0:
            # lm_head output(2) + to float(4) + estimated misc(1) = 7
            runtime_cache_size = int(max_prefill_token_num * vocal_size * 7)
            num_available = (num_free_gpu_mem - runtime_cache_size) * cache_max_entry_count
            if int(num_available) // cache_block_size >= 16:
                break
            max_prefill_token_num = max_prefill_token_num // 2
        return runtime_cache_size, max_prefill_token_num

    def __get_free_gpu_mem_size(cache_block_size: int):
        """get free gpu memory size."""
        torch.cuda.empty_cache()
        gpu_mem_physical_free, _ = get_gpu_memory(gpu_id)
        logger.debug(f'device<{gpu_id}> free gpu memory: {gpu_mem_physical_free>>20} mb')
        vocal_size = model_config.vocab_size

        runtime_cache_size, max_prefill_token_num = __get_runtime_size(gpu_mem_physical_free, cache_block_size,
                                                                       vocal_size)
        if cache_config.max_prefill_token_num != max_prefill_token_num:
            if max_prefill_token_num <= 0:
                raise RuntimeError('No enough gpu memory for runtime.')
            cache_config.max_prefill_token_num = max_prefill_token_num
            logger.warning(f'device<{gpu_id}> No enough memory. '
                           'update max_prefill_token_num='
                           f'{max_prefill_token_num}')
        gpu_mem_physical_free -= runtime_cache_size
        logger.debug('estimated max runtime memory:'
                     f' {runtime_cache_size>>20} mb')
        return gpu_mem_physical_free * cache_config.cache_max_entry_count

    cache_block_size = CacheEngine.get_cache_block_size(cache_config.block_size, model_config, world_size,
                                                        cache_config.quant_policy)
    gpu_mem = __get_free_gpu_mem_size(cache_block_size)
    cpu_mem = host_mem_size
    if cache_config.num_cpu_blocks == 0:
        cache_config.num_cpu_blocks = int(cpu_mem / cache_block_size)
        if cache_config.num_cpu_blocks <= 0:
            raise RuntimeError('No enough host memory for kv cache.')
    if cache_config.num_gpu_blocks == 0:
        cache_config.num_gpu_blocks = int(gpu_mem / cache_block_size)
        if cache_config.num_gpu_blocks <= 0:
            raise RuntimeError('No enough gpu memory for kv cache.')
    cache_config.window_size = model_config.sliding_window

    logger.debug('block num: {}'.format(cache_config.num_gpu_blocks))


def cache_swapping(cache_engine: CacheEngine, swap_in_map: dict, swap_out_map: dict):
    """perform cache swapping."""
    issued_cache_op = False
    if len(swap_in_map) > 0:
        cache_engine.swap_in(swap_in_map)
        issued_cache_op = True
    if len(swap_out_map) > 0:
        cache_engine.swap_out(swap_out_map)
        issued_cache_op = True

    if issued_cache_op:
        cache_engine.events.wait()


@torch.inference_mode()
def model_forward(
    model: torch.nn.Module,
    inputs: ModelInputs,
    cache_engine: CacheEngine,
    world_size: int = 1,
    stream: torch.cuda.Stream = None,
):
    """perform model forward."""
    stream = stream or torch.cuda.current_stream()
    with torch.cuda.stream(stream):
        # forward
        ctx_mgr = model.ctx_mgr
        context = ctx_mgr.build_context(
            inputs=inputs,
            model_config=cache_engine.model_config,
            world_size=world_size,
            kv_caches=cache_engine.gpu_cache,
            kv_quant_policy=cache_engine.cache_config.quant_policy,
        )
        with ctx_mgr.context(context):
            model_metas = None
            model_metas = model.update_model_metas(
                past_key_values=cache_engine.gpu_cache,
                context=context,
            )
            input_dict = model.prepare_inputs_for_generation(
                past_key_values=cache_engine.gpu_cache,
                context=context,
            )
            output = model(**input_dict)
    return dict(hiddens=output, model_metas=model_metas)


SwapMap = Dict[int, int]


class AutoModelAgent:
    """Base model agent."""

    def __init__(self, model_config: ModelConfig, cache_config: CacheConfig):
        self.model_config = model_config
        self.cache_config = cache_config

    async def async_forward(self, inputs: ModelInputs, swap_in_map: SwapMap, swap_out_map: SwapMap):
        """model forward."""
        raise NotImplementedError('Not implemented.')

    def get_logits(self, hidden_states: torch.Tensor):
        """get logits of model output."""
        raise NotImplementedError('Not implemented.')


class BaseModelAgent(AutoModelAgent):
    """Base model agent.

    load model on local gpu
    """

    def __init__(self,
                 model_path: str,
                 model_config: ModelConfig,
                 cache_config: CacheConfig,
                 backend_config: BackendConfig,
                 adapters: Dict[str, str] = None,
                 trust_remote_code: bool = True):
        super().__init__(model_config=model_config, cache_config=cache_config)
        device = 'cuda'
        self.backend_config = backend_config
        self._adapters = adapters

        self.patched_model = self._build_model(model_path, adapters, device=device)

        _update_cache_config(model_config, cache_config)

        self.cache_engine = CacheEngine(cache_config, model_config)

        self.stream = torch.cuda.Stream()

    def _build_model(self, model_path: str, adapters: Dict[str, str] = None, device: torch.device = 'cuda'):
        """build patched model."""
        custom_module_map = self.model_config.custom_module_map
        if custom_module_map is not None:
            update_custom_module_map(custom_module_map)
        logger.info('build model.')
        patched_model = build_patched_model(self.model_config, device=device)
        logger.info('loading weights.')
        load_model_weights(patched_model, model_path, device=device)
        if adapters is not None:
            logger.info('loading adapters.')
            add_adapters(patched_model, adapters, dtype=self.model_config.dtype, device=device)
        return patched_model

    def _forward_impl(self, inputs: ModelInputs, swap_in_map: SwapMap, swap_out_map: SwapMap):
        cache_swapping(self.cache_engine, swap_in_map=swap_in_map, swap_out_map=swap_out_map)
        output = model_forward(
            self.patched_model,
            inputs,
            self.cache_engine,
            world_size=1,
            stream=self.stream,
        )
        return output

    def forward(self, inputs: ModelInputs, swap_in_map: SwapMap, swap_out_map: SwapMap):
        output = self._forward_impl(inputs, swap_in_map=swap_in_map, swap_out_map=swap_out_map)
        self.stream.synchronize()
        return output

    async def async_forward(self, inputs: ModelInputs, swap_in_map: SwapMap, swap_out_map: SwapMap):
        output = self._forward_impl(inputs, swap_in_map=swap_in_map, swap_out_map=swap_out_map)
        await asyncio.sleep(0)
        while not self.stream.query():
            await asyncio.sleep(0)
        return output

    def get_logits(self, hidden_states: torch.Tensor):
        return self.patched_model.get_logits(hidden_states)


def _find_available_port() -> bool:
    """find available port."""
    port = 29500
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            if s.connect_ex(('localhost', port)) != 0:
                return port
            port += 1


def _tp_model_loop(rank: int, model_path: str, model_config: ModelConfig, cache_config: CacheConfig,
                   backend_config: BackendConfig, adapters: Dict[str, str], world_size: int, cpu_group: dist.ProcessGroup):
    """Start model loops for tensor parallel model inference."""
    stream = torch.cuda.Stream()
    patched_model = build_patched_model(model_config, device=torch.device('cuda'))
    load_model_weights(patched_model, model_path, device=torch.device('cuda'))
    _update_cache_config(model_config, cache_config, gpu_id=rank, world_size=world_size)
    cache_engine = CacheEngine(cache_config, model_config, rank=rank, world_size=world_size)

    while True:
        inputs = [None, None, None, None]
        dist.broadcast_object_list(inputs, group=cpu_group)
        model_inputs, swap_in_map, swap_out_map, exit_flag = inputs
        if exit_flag:
            break
        model_inputs = model_inputs.to_device('cuda')
        cache_swapping(cache_engine, swap_in_map=swap_in_map, swap_out_map=swap_out_map)
        model_forward(patched_model, model_inputs, cache_engine, world_size=world_size, stream=stream)


def _start_tp_process(proc_id: int, world_size: int, func: Callable, args: List = None, kwargs: Dict = None):
    """Start the tensor parallel process."""
    rank = proc_id + 1
    args = args or tuple()
    kwargs = kwargs or dict()
    try:
        timeout = timedelta(days=35600)
        dist.init_process_group('nccl', rank=rank, world_size=world_size, timeout=timeout)
        cpu_group = dist.new_group(timeout=timeout, backend='gloo')
        with torch.cuda.device(rank):
            func(rank, *args, cpu_group=cpu_group, **kwargs)
    except BaseException as e:
        from traceback import print_exc
        logger.error(f'Rank[{rank}] failed.')
        print_exc()
        raise e
    finally:
        dist.destroy_process_group()


class TPModelAgent(AutoModelAgent):
    """Tensor Parallelism model agent.

    load model on multiple GPUs
    """

    def __init__(self,
                 model_path: str,
                 model_config: ModelConfig,
                 cache_config: CacheConfig,
                 backend_config: BackendConfig,
                 world_size: int,
                 adapters: Dict[str, str] = None,
                 trust_remote_code: bool = True) -> None:
        super().__init__(model_config=model_config, cache_config=cache_config)
        self.mp_ctx = mp.get_context('spawn')
        self.world_size = world_size
        self.backend_config = backend_config

        port = _find_available_port()
        os.environ.setdefault('MASTER_ADDR', '127.0.0.1')
        os.environ.setdefault('MASTER_PORT', str(port))
        logger.info(f"MASTER_ADDR={os.environ['MASTER_ADDR']}, MASTER_PORT={os.environ['MASTER_PORT']}")

        self.mp_context = mp.spawn(
            _start_tp_process,
            args=(world_size, _tp_model_loop, (model_path, model_config, cache_config, backend_config, adapters, world_size)),
            nprocs=world_size - 1,
            join=False,
            daemon=True,
        )
        dist.init_process_group('nccl', rank=0, world_size=world_size, timeout=timedelta(days=35600))
        self.cpu_group = dist.new_group(backend='gloo')
        torch.cuda.set_device(0)

        self.patched_model = build_patched_model(model_config, device=torch.device('cuda:0'))
        load_model_weights(self.patched_model, model_path, device=torch.device('cuda:0'))
        _update_cache_config(model_config, cache_config, gpu_id=0, world_size=world_size)
        self.cache_engine = CacheEngine(cache_config, model_config, rank=0, world_size=world_size)
        self.stream = torch.cuda.Stream()  # rank-0 compute stream

    def forward(self, inputs: ModelInputs, swap_in_map: SwapMap, swap_out_map: SwapMap):
        """model forward."""
        dist.broadcast_object_list([inputs.to_device('cpu'), swap_in_map, swap_out_map, False], group=self.cpu_group)
        cache_swapping(self.cache_engine, swap_in_map=swap_in_map, swap_out_map=swap_out_map)
        output = model_forward(self.patched_model, inputs, self.cache_engine, world_size=self.world_size,
                               stream=self.stream)
        self.stream.synchronize()
        return output

    def get_logits(self, hidden_states: torch.Tensor):
        return self.patched_model.get_logits(hidden_states)


def build_model_agent(model_path: str,
                      cache_config: CacheConfig,
                      backend_config: BackendConfig,
                      trust_remote_code: bool,
                      adapters: Dict[str, str] = None,
                      tp: int = 1,
                      model_config: ModelConfig = None):
    """create model agent."""
    if model_config is None:
        model_config = ModelConfig.from_pretrained(model_path, trust_remote_code=trust_remote_code)
    if tp == 1:
        model_agent = BaseModelAgent(model_path,
                                     model_config=model_config,
                                     cache_config=cache_config,
                                     backend_config=backend_config,
                                     adapters=adapters,
                                     trust_remote_code=trust_remote_code)
    else:
        model_agent = TPModelAgent(model_path,
                                   model_config=model_config,
                                   cache_config=cache_config,
                                   backend_config=backend_config,
                                   world_size=tp,
                                   adapters=adapters,
                                   trust_remote_code=trust_remote_code)
    return model_agent
