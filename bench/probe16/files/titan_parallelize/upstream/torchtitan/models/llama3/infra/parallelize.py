# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.
#
# This file applies the PT-D parallelisms (except pipeline parallelism) and various
# training techniques (e.g. activation checkpointing and compile) to the Llama model.

from collections import defaultdict

import torch
import torch.nn as nn
from torch.distributed._composable.replicate import replicate
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    checkpoint_wrapper as ptd_checkpoint_wrapper,
)
from torch.distributed.device_mesh import DeviceMesh
from torch.distributed.fsdp import CPUOffloadPolicy, fully_shard, MixedPrecisionPolicy
from torch.distributed.tensor import Replicate, Shard
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    parallelize_module,
    PrepareModuleInput,
    RowwiseParallel,
    SequenceParallel,
)
from torch.nn.attention import sdpa_kernel, SDPBackend

from torchtitan.config_manager import JobConfig, TORCH_DTYPE_MAP
from torchtitan.tools.logging import logger


def apply_tp(model: nn.Module, tp_mesh: DeviceMesh, loss_parallel: bool, enable_async_tp: bool):
    """Apply tensor parallelism."""
    parallelize_module(model, tp_mesh, {
            "tok_embeddings": RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1)),
            "norm": SequenceParallel(),
            "output": ColwiseParallel(
                input_layouts=Shard(1),
                output_layouts=Shard(-1) if loss_parallel else Replicate(),
                use_local_output=not loss_parallel,
            ),
        },
    )

    for transformer_block in model.layers.values():
        layer_plan = {
            "attention_norm": SequenceParallel(),
            "attention": PrepareModuleInput(
                input_layouts=(Shard(1), None),
                desired_input_layouts=(Replicate(), None),
            ),
            "attention.wq": ColwiseParallel(),
            "attention.wk": ColwiseParallel(),
            "attention.wv": ColwiseParallel(),
            "attention.wo": RowwiseParallel(output_layouts=Shard(1)),
            "ffn_norm": SequenceParallel(),
            "feed_forward": PrepareModuleInput(
                input_layouts=(Shard(1),),
                desired_input_layouts=(Replicate(),),
            ),
            "feed_forward.w1": ColwiseParallel(),
            "feed_forward.w2": RowwiseParallel(output_layouts=Shard(1)),
            "feed_forward.w3": ColwiseParallel(),
        }
        parallelize_module(
            module=transformer_block,
            device_mesh=tp_mesh,
            parallelize_plan=layer_plan,
        )

    if enable_async_tp:
        from torch.distributed._symmetric_memory import enable_symm_mem_for_group

        torch._inductor.config._micro_pipeline_tp = True
        enable_symm_mem_for_group(tp_mesh.get_group().group_name)

    logger.info(
        f"Applied {'Float8 ' if False else ''}{'Async ' if enable_async_tp else ''}"
        "Tensor Parallelism to the model"
    )


# for selective op activation checkpointing
_save_list = {
    torch.ops.aten.mm.default,
    torch.ops.aten._scaled_dot_product_efficient_attention.default,
    torch.ops.aten._scaled_dot_product_flash_attention.default,
    torch.ops._c10d_functional.reduce_scatter_tensor.default,
    torch.ops.aten.max.default,
}


def _apply_ac_to_block(module: nn.Module, ac_mode: str):
    if ac_mode == "full":
        return ptd_checkpoint_wrapper(module, preserve_rng_state=False)
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

    def _get_custom_policy(meta):
        def _custom_policy(ctx, func, *args, **kwargs):
            mode = "recompute" if ctx.is_recompute else "forward"
            mm_count_key = f"{mode}_mm_count"
            if func == torch.ops.aten.mm.default:
                meta[mm_count_key] += 1
            to_save = func in _save_list and not (
                func == torch.ops.aten.mm.default and meta[mm_count_key] % 2 == 0
            )
            return CheckpointPolicy.MUST_SAVE if to_save else CheckpointPolicy.PREFER_RECOMPUTE

        return _custom_policy

    def selective_checkpointing_context_fn():
        meta = defaultdict(int)
        return create_selective_checkpoint_contexts(_get_custom_policy(meta))

    return ptd_checkpoint_wrapper(
        module, context_fn=selective_checkpointing_context_fn, preserve_rng_state=False
    )


def apply_compile(model: nn.Module):
    for layer_id, transformer_block in model.layers.named_children():
        transformer_block = torch.compile(transformer_block, fullgraph=True)
        model.layers.register_module(layer_id, transformer_block)
    logger.info("Compiling each TransformerBlock with torch.compile")


def apply_fsdp(model, dp_mesh, param_dtype, reduce_dtype, reshard_after_forward=True, cpu_offload=False):
    mp_policy = MixedPrecisionPolicy(param_dtype=param_dtype, reduce_dtype=reduce_dtype)
    fsdp_config = {"mesh": dp_mesh, "mp_policy": mp_policy}
    if cpu_offload:
        fsdp_config["offload_policy"] = CPUOffloadPolicy()
    for layer_id, transformer_block in model.layers.items():
        fully_shard(transformer_block, **fsdp_config, reshard_after_forward=reshard_after_forward)
    fully_shard(model, **fsdp_config, reshard_after_forward=reshard_after_forward)


def apply_ddp(model: nn.Module, dp_mesh: DeviceMesh, enable_compile: bool):
    if enable_compile:
        torch._dynamo.config.optimize_ddp = "python_reducer_without_compiled_forward"
    replicate(model, device_mesh=dp_mesh, bucket_cap_mb=100)
    logger.info("Applied DDP to the model")


def parallelize_llama(model: nn.Module, world_mesh: DeviceMesh, job_config: JobConfig):
    if "tp" in (world_mesh.mesh_dim_names or ()):
        apply_tp(
            model,
            world_mesh["tp"],
            loss_parallel=not job_config.parallelism.disable_loss_parallel,
            enable_async_tp=job_config.parallelism.enable_async_tensor_parallel,
        )

    if "cp" in (world_mesh.mesh_dim_names or ()):
        # context parallel ring attention only dispatches to the flash / efficient kernels
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
            logger.info("Context parallel enabled with flash/efficient SDPA backends")

    if job_config.activation_checkpoint.mode != "none":
        for layer_id, block in model.layers.named_children():
            block = _apply_ac_to_block(block, job_config.activation_checkpoint.mode)
            model.layers.register_module(layer_id, block)
        logger.info(f"Applied {job_config.activation_checkpoint.mode} activation checkpointing")

    if job_config.compile.enable and "model" in job_config.compile.components:
        torch._inductor.config.coordinate_descent_tuning = True
        apply_compile(model)

    if "dp_shard" in (world_mesh.mesh_dim_names or ()):
        apply_fsdp(
            model,
            world_mesh["dp_shard"],
            param_dtype=TORCH_DTYPE_MAP[job_config.training.mixed_precision_param],
            reduce_dtype=TORCH_DTYPE_MAP[job_config.training.mixed_precision_reduce],
            reshard_after_forward=job_config.parallelism.fsdp_reshard_after_forward != "never",
        )
        logger.info("Applied FSDP to the model")
    elif job_config.parallelism.data_parallel_replicate_degree > 1:
        apply_ddp(model, world_mesh["dp_replicate"], enable_compile=job_config.compile.enable)
