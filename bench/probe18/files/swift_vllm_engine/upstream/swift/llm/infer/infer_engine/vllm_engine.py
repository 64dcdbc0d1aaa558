# Copyright (c) Alibaba, Inc. and its affiliates.
import asyncio
import inspect
import os
from contextlib import contextmanager, nullcontext
from copy import deepcopy
from typing import Any, AsyncIterator, Dict, Iterator, List, Optional, Union

import torch
from packaging import version
from transformers import GenerationConfig
from transformers.utils import is_torch_npu_available

from swift.utils import get_device, get_dist_setting, get_logger, is_dist
from ..protocol import ChatCompletionResponse, InferRequest, RequestConfig
from .infer_engine import InferEngine
from .patch import patch_auto_config, patch_auto_tokenizer
from .utils import AdapterRequest, InferStreamer

try:
    # After setting the environment variables, import vllm. This way of writing allows lint to pass.
    os.environ['VLLM_WORKER_MULTIPROC_METHOD'] = 'spawn'
    os.environ['VLLM_ENGINE_ITERATION_TIMEOUT_S'] = '3600'
    import vllm
    from vllm import AsyncEngineArgs, AsyncLLMEngine, EngineArgs, LLMEngine, SamplingParams
except Exception:
    raise

logger = get_logger()
dtype_mapping = {torch.float16: 'float16', torch.bfloat16: 'bfloat16', torch.float32: 'float32'}


@contextmanager
def patch_device(device: Optional[str] = None):
    """Pin the vLLM engine of this rank to one GPU by masking the others."""
    if device is None:
        yield
        return
    origin = os.environ.get('CUDA_VISIBLE_DEVICES')
    device_index = int(str(device).split(':')[-1])
    os.environ['CUDA_VISIBLE_DEVICES'] = str(device_index)
    try:
        yield
    finally:
        if origin is None:
            os.environ.pop('CUDA_VISIBLE_DEVICES', None)
        else:
            os.environ['CUDA_VISIBLE_DEVICES'] = origin


class VllmEngine(InferEngine):

    def __init__(
        self,
        model_id_or_path: str,
        torch_dtype: Optional[torch.dtype] = None,
        *,
        model_type: Optional[str] = None,
        use_hf: Optional[bool] = None,
        revision: Optional[str] = None,
        hub_token: Optional[str] = None,
        # engine_kwargs
        gpu_memory_utilization: float = 0.9,
        tensor_parallel_size: int = 1,
        pipeline_parallel_size: int = 1,
        max_model_len: Optional[int] = None,
        max_num_seqs: int = 256,
        disable_custom_all_reduce: bool = True,
        enforce_eager: bool = False,
        limit_mm_per_prompt: Optional[Dict[str, Any]] = None,
        device: Optional[str] = None,
        seed: Optional[int] = None,
        # lora
        enable_lora: bool = False,
        max_loras: int = 1,
        max_lora_rank: int = 16,
        enable_prefix_caching: bool = False,
        engine_kwargs: Optional[Dict[str, Any]] = None,
    ) -> None:
        self.processor = self._get_processor(model_id_or_path, torch_dtype, model_type=model_type, use_hf=use_hf,
                                             hub_token=hub_token, revision=revision)
        if tensor_parallel_size is None:
            tensor_parallel_size = torch.cuda.device_count()
        self._prepare_engine_kwargs(
            gpu_memory_utilization=gpu_memory_utilization,
            tensor_parallel_size=tensor_parallel_size,
            pipeline_parallel_size=pipeline_parallel_size,
            max_model_len=max_model_len,
            max_num_seqs=max_num_seqs,
            disable_custom_all_reduce=disable_custom_all_reduce,
            enforce_eager=enforce_eager,
            limit_mm_per_prompt=limit_mm_per_prompt,
            enable_lora=enable_lora,
            max_loras=max_loras,
            max_lora_rank=max_lora_rank,
            enable_prefix_caching=enable_prefix_caching,
            device=device,
            seed=seed,
            engine_kwargs=engine_kwargs,
        )
        context = patch_device(device) if device is not None else nullcontext()
        with context:
            self._prepare_engine()
        self._load_generation_config()

    def _prepare_engine(self) -> None:
        with patch_auto_tokenizer(self.tokenizer), patch_auto_config(self.config):
            engine = AsyncLLMEngine.from_engine_args(self.engine_args)
        self.engine = engine

    def _prepare_engine_kwargs(self, gpu_memory_utilization: float = 0.9, tensor_parallel_size: int = 1,
                               pipeline_parallel_size: int = 1, max_model_len: Optional[int] = None,
                               max_num_seqs: int = 256, disable_custom_all_reduce: bool = True,
                               enforce_eager: bool = False, limit_mm_per_prompt: Optional[Dict[str, Any]] = None,
                               device: Optional[str] = None, seed: Optional[int] = None,
                               enable_lora: bool = False, max_loras: int = 1, max_lora_rank: int = 16,
                               enable_prefix_caching: bool = False,
                               engine_kwargs: Optional[Dict[str, Any]] = None) -> None:
        if engine_kwargs is None:
            engine_kwargs = {}
        disable_log_stats = engine_kwargs.pop('disable_log_stats', True)
        engine_kwargs['disable_log_requests'] = True
        parameters = inspect.signature(AsyncEngineArgs.__init__).parameters
        if 'device' in parameters:
            engine_kwargs['device'] = 'cuda'
        if 'seed' in parameters and seed is not None:
            engine_kwargs['seed'] = seed
        if 'enable_lora' in parameters and enable_lora:
            engine_kwargs['enable_lora'] = enable_lora
            engine_kwargs['max_loras'] = max_loras
            engine_kwargs['max_lora_rank'] = max_lora_rank
        if 'limit_mm_per_prompt' in parameters and limit_mm_per_prompt:
            engine_kwargs['limit_mm_per_prompt'] = limit_mm_per_prompt
        # the FlashAttention backend is the fastest on Ampere/Hopper
        os.environ.setdefault('VLLM_ATTENTION_BACKEND', 'FLASH_ATTN')
        engine_args = AsyncEngineArgs(
            model=self.model_dir,
            dtype=dtype_mapping[self.model_info.torch_dtype],
            gpu_memory_utilization=gpu_memory_utilization,
            tensor_parallel_size=tensor_parallel_size,
            pipeline_parallel_size=pipeline_parallel_size,
            max_num_seqs=max_num_seqs,
            disable_log_stats=disable_log_stats,
            disable_custom_all_reduce=disable_custom_all_reduce,
            enforce_eager=enforce_eager,
            trust_remote_code=True,
            enable_prefix_caching=enable_prefix_caching,
            **engine_kwargs,
        )
        self.engine_args = engine_args
        self.enable_lora = enable_lora
        if max_model_len is not None:
            self.max_model_len = max_model_len

    def _load_generation_config(self) -> None:
        generation_config_path = os.path.join(self.model_dir, 'generation_config.json')
        if os.path.isfile(generation_config_path):
            generation_config = GenerationConfig.from_pretrained(self.model_dir)
            kwargs = generation_config.to_dict()
            max_new_tokens = kwargs.get('max_new_tokens')
            if max_new_tokens is not None:
                kwargs['max_tokens'] = max_new_tokens
            top_k = kwargs.get('top_k')
            if top_k == 0:
                kwargs['top_k'] = -1
            parameters = inspect.signature(SamplingParams).parameters
            for k, v in kwargs.copy().items():
                if k not in parameters or v is None:
                    kwargs.pop(k)
            self.generation_config = SamplingParams(**kwargs)
        else:
            self.generation_config = SamplingParams()

    def _add_adapter(self, adapter_request: AdapterRequest, adapter_id: int):
        from vllm.lora.request import LoRARequest
        return LoRARequest(lora_name=adapter_request.name, lora_path=adapter_request.path, lora_int_id=adapter_id)
