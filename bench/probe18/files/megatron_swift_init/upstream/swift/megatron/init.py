# Copyright (c) Alibaba, Inc. and its affiliates.
"""Environment setup and Megatron-Core patches used by `megatron sft` / `megatron pt`."""
import os
import sys
from contextlib import contextmanager
from datetime import timedelta
from typing import Optional

import torch
import torch.distributed as dist

from swift.llm import git_clone_github
from swift.utils import get_logger, is_master, subprocess_run

logger = get_logger()


def _rename_files(megatron_lm_path: str):
    # Megatron-LM ships a `megatron/__init__.py` that shadows the pip package
    if not os.path.exists(os.path.join(megatron_lm_path, 'megatron_lm.egg-info')):
        subprocess_run([sys.executable, '-m', 'pip', 'install', '-e', megatron_lm_path])


def init_megatron_env() -> None:
    if 'MEGATRON_LM_PATH' not in os.environ:
        os.environ['MEGATRON_LM_PATH'] = git_clone_github(
            'https://github.com/NVIDIA/Megatron-LM', branch='core_r0.12.0')
    megatron_lm_path = os.environ['MEGATRON_LM_PATH']
    _rename_files(megatron_lm_path)
    sys.path.insert(0, megatron_lm_path)
    # overlap grad reduce-scatter with backward requires one hardware queue
    os.environ.setdefault('CUDA_DEVICE_MAX_CONNECTIONS', '1')
    os.environ.setdefault('NVTE_FLASH_ATTN', '1')
    os.environ.setdefault('NVTE_FUSED_ATTN', '0')
    os.environ.setdefault('NVTE_APPLY_QK_LAYER_SCALING', '0')
    _patch_transformer_engine()
    _patch_megatron()


def _patch_transformer_engine():
    try:
        import transformer_engine as te
        from transformer_engine.pytorch.attention import FusedRoPEFunc
    except ImportError:
        logger.warning('transformer_engine is required for `--transformer_impl transformer_engine`.')
        return
    # TE < 1.10 has no `interleaved` kwarg; make Megatron's call signature work with both
    _origin_forward = FusedRoPEFunc.forward

    def forward(ctx, t, freqs, tensor_format='sbhd', interleaved=False, cu_seqlens=None, cp_size=1, cp_rank=0):
        return _origin_forward(ctx, t, freqs, tensor_format, cu_seqlens)

    if te.__version__ < '1.10':
        FusedRoPEFunc.forward = staticmethod(forward)


def _patch_megatron():
    from megatron.core import parallel_state
    from megatron.training import initialize

    _origin_initialize_distributed = initialize._initialize_distributed

    def _initialize_distributed(*args, **kwargs):
        device_count = torch.cuda.device_count()
        if device_count > 0 and not dist.is_initialized():
            local_rank = int(os.environ.get('LOCAL_RANK', 0))
            torch.cuda.set_device(local_rank)
        return _origin_initialize_distributed(*args, **kwargs)

    initialize._initialize_distributed = _initialize_distributed


def get_megatron_extra_args(args) -> dict:
    """Args forwarded to megatron's `initialize_megatron(extra_args_provider=...)`."""
    extra = {
        'transformer_impl': 'transformer_engine',
        'attention_backend': 'flash',
        'distributed_backend': 'nccl',
        'use_distributed_optimizer': True,
        'overlap_grad_reduce': True,
        'overlap_param_gather': True,
        'bf16': args.torch_dtype == torch.bfloat16,
        'fp16': args.torch_dtype == torch.float16,
        'apply_rope_fusion': True,
        'masked_softmax_fusion': True,
        'bias_dropout_fusion': True,
        'gradient_accumulation_fusion': True,
        'cross_entropy_loss_fusion': True,
        'tp_comm_overlap': False,
    }
    if args.sequence_parallel:
        extra['sequence_parallel'] = True
    if args.fp8_format is not None:
        extra['fp8'] = args.fp8_format
        extra['fp8_recipe'] = 'delayed'
    return extra


@contextmanager
def nsys_profile(enabled: bool, start_step: int, end_step: int, step: int):
    """Wrap a train step with the CUDA profiler API so `nsys profile -c cudaProfilerApi` picks it up."""
    if enabled and step == start_step:
        torch.cuda.cudart().cudaProfilerStart()
        torch.autograd.profiler.emit_nvtx(record_shapes=True).__enter__()
    torch.cuda.nvtx.range_push(f'step_{step}')
    try:
        yield
    finally:
        torch.cuda.nvtx.range_pop()
        if enabled and step == end_step:
            torch.cuda.cudart().cudaProfilerStop()


def report_memory(name: str) -> None:
    mega_bytes = 1024.0 * 1024.0
    string = name + ' memory (MB)'
    string += ' | allocated: {:.1f}'.format(torch.cuda.memory_allocated() / mega_bytes)
    string += ' | max allocated: {:.1f}'.format(torch.cuda.max_memory_allocated() / mega_bytes)
    string += ' | reserved: {:.1f}'.format(torch.cuda.memory_reserved() / mega_bytes)
    string += ' | max reserved: {:.1f}'.format(torch.cuda.max_memory_reserved() / mega_bytes)
    if dist.get_rank() == 0:
        logger.info('[Rank {}] {}'.format(dist.get_rank(), string))


def destroy_megatron():
    from megatron.core import parallel_state
    parallel_state.destroy_model_parallel()
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()
