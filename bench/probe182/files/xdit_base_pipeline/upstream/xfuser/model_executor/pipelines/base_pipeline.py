from abc import ABCMeta, abstractmethod
from functools import wraps
import os
import time
from typing import Callable, Dict, List, Optional, Tuple, Union

import torch
import torch.distributed
import torch.nn as nn
from torch.profiler import profile, ProfilerActivity, schedule, tensorboard_trace_handler

from diffusers import DiffusionPipeline
from diffusers.schedulers import KarrasDiffusionSchedulers

from xfuser.config import EngineConfig, InputConfig
from xfuser.logger import init_logger
from xfuser.core.distributed import (
    get_data_parallel_world_size,
    get_sequence_parallel_world_size,
    get_pipeline_parallel_world_size,
    get_classifier_free_guidance_world_size,
    get_classifier_free_guidance_rank,
    get_pipeline_parallel_rank,
    get_pp_group,
    get_world_group,
    get_runtime_state,
    initialize_runtime_state,
    is_dp_last_group,
)
from xfuser.model_executor.base_wrapper import xFuserBaseWrapper
from xfuser.envs import PACKAGES_CHECKER

PACKAGES_CHECKER = PACKAGES_CHECKER.get_packages_info()
HAS_FLASH_ATTN = PACKAGES_CHECKER["has_flash_attn"]

logger = init_logger(__name__)


class xFuserPipelineBaseWrapper(xFuserBaseWrapper, metaclass=ABCMeta):

    def __init__(
        self,
        pipeline: DiffusionPipeline,
        engine_config: EngineConfig,
    ):
        self.module: DiffusionPipeline
        self._init_runtime_state(pipeline=pipeline, engine_config=engine_config)
        self._init_fast_attn_state(pipeline=pipeline, engine_config=engine_config)

        # backbone
        transformer = getattr(pipeline, "transformer", None)
        unet = getattr(pipeline, "unet", None)
        # vae
        vae = getattr(pipeline, "vae", None)
        # scheduler
        scheduler = getattr(pipeline, "scheduler", None)

        if transformer is not None:
            pipeline.transformer = self._convert_transformer_backbone(
                transformer,
                enable_torch_compile=engine_config.runtime_config.use_torch_compile,
                enable_onediff=engine_config.runtime_config.use_onediff,
            )
        elif unet is not None:
            pipeline.unet = self._convert_unet_backbone(unet)

        if scheduler is not None:
            pipeline.scheduler = self._convert_scheduler(scheduler)

        if vae is not None and engine_config.runtime_config.use_parallel_vae and not self.use_naive_forward():
            pipeline.vae = self._convert_vae(vae)

        self._cuda_graph = None
        self._static_inputs = None
        super().__init__(module=pipeline)

    def reset_activation_cache(self):
        if hasattr(self.module, "transformer") and hasattr(
            self.module.transformer, "reset_activation_cache"
        ):
            self.module.transformer.reset_activation_cache()
        if hasattr(self.module, "unet") and hasattr(
            self.module.unet, "reset_activation_cache"
        ):
            self.module.unet.reset_activation_cache()
        if hasattr(self.module, "vae") and hasattr(
            self.module.vae, "reset_activation_cache"
        ):
            self.module.vae.reset_activation_cache()
        if hasattr(self.module, "scheduler") and hasattr(
            self.module.scheduler, "reset_activation_cache"
        ):
            self.module.scheduler.reset_activation_cache()

    def to(self, *args, **kwargs):
        self.module = self.module.to(*args, **kwargs)
        return self

    @staticmethod
    def enable_fast_attn(func):
        @wraps(func)
        def fast_attn_fn(self, *args, **kwargs):
            if self.fast_attn_enable:
                set_fast_attn_enable(self.module.transformer)
                out = func(self, *args, **kwargs)
                set_fast_attn_enable(self.module.transformer, False)
                return out
            else:
                return func(self, *args, **kwargs)

        return fast_attn_fn

    @staticmethod
    def enable_data_parallel(func):
        @wraps(func)
        def data_parallel_fn(self, *args, **kwargs):
            prompt = kwargs.get("prompt", None)
            negative_prompt = kwargs.get("negative_prompt", "")
            # dp_degree <= batch_size
            batch_size = len(prompt) if isinstance(prompt, list) else 1
            if batch_size > 1:
                dp_degree = get_runtime_state().parallel_config.dp_degree
                dp_group_rank = get_world_group().rank // (
                    get_world_group().world_size // get_data_parallel_world_size()
                )
                dp_group_batch_size = (batch_size + dp_degree - 1) // dp_degree
                start_batch_idx = dp_group_rank * dp_group_batch_size
                end_batch_idx = min(
                    (dp_group_rank + 1) * dp_group_batch_size, batch_size
                )
                prompt = prompt[start_batch_idx:end_batch_idx]
                if isinstance(negative_prompt, List):
                    negative_prompt = negative_prompt[start_batch_idx:end_batch_idx]
                kwargs["prompt"] = prompt
                kwargs["negative_prompt"] = negative_prompt
            return func(self, *args, **kwargs)

        return data_parallel_fn

    @staticmethod
    def check_to_use_naive_forward(func):
        @wraps(func)
        def check_naive_forward_fn(self, *args, **kwargs):
            if self.use_naive_forward():
                return self.module(*args, **kwargs)
            else:
                return func(self, *args, **kwargs)

        return check_naive_forward_fn

    def use_naive_forward(self):
        return (
            get_pipeline_parallel_world_size() == 1
            and get_classifier_free_guidance_world_size() == 1
            and get_sequence_parallel_world_size() == 1
        )

    def prepare_run(
        self, input_config: InputConfig, steps: int = 3, sync_steps: int = 1
    ):
        prompt = [""] * input_config.batch_size if input_config.batch_size > 1 else ""
        warmup_steps = get_runtime_state().runtime_config.warmup_steps
        get_runtime_state().runtime_config.warmup_steps = sync_steps
        self.__call__(
            height=input_config.height,
            width=input_config.width,
            prompt=prompt,
            num_inference_steps=steps,
            output_type="latent",
            generator=torch.Generator(device="cuda").manual_seed(42),
        )
        get_runtime_state().runtime_config.warmup_steps = warmup_steps

    def profile_run(self, input_config: InputConfig, trace_dir: str = "./profile"):
        """Profile one short generation and dump a chrome trace per rank."""
        rank = get_world_group().rank
        os.makedirs(trace_dir, exist_ok=True)
        with profile(
            activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
            schedule=schedule(wait=0, warmup=1, active=1, repeat=1),
            on_trace_ready=tensorboard_trace_handler(os.path.join(trace_dir, f"rank{rank}")),
            record_shapes=True,
            with_stack=False,
        ) as prof:
            for _ in range(2):
                self.prepare_run(input_config, steps=2)
                prof.step()
        if rank == 0:
            logger.info(f"profiler traces written to {trace_dir}")

    def _init_runtime_state(
        self, pipeline: DiffusionPipeline, engine_config: EngineConfig
    ):
        initialize_runtime_state(pipeline=pipeline, engine_config=engine_config)

    def _init_fast_attn_state(
        self, pipeline: DiffusionPipeline, engine_config: EngineConfig
    ):
        from xfuser.core.fast_attention import initialize_fast_attn_state

        initialize_fast_attn_state(pipeline=pipeline, single_config=engine_config.fast_attn_config)

    def _convert_transformer_backbone(
        self,
        transformer: nn.Module,
        enable_torch_compile: bool,
        enable_onediff: bool,
    ):
        if (
            get_pipeline_parallel_world_size() == 1
            and get_sequence_parallel_world_size() == 1
            and get_classifier_free_guidance_world_size() == 1
        ):
            logger.info(
                "Transformer backbone found, but model parallelism is not enabled, "
                "use naive model"
            )
        else:
            logger.info("Transformer backbone found, paralleling transformer...")
            from xfuser.model_executor.models.transformers import (
                xFuserTransformerWrappersRegister,
            )

            wrapper = xFuserTransformerWrappersRegister.get_wrapper(transformer)
            transformer = wrapper(transformer=transformer)

        if enable_torch_compile and enable_onediff:
            logger.warning(
                f"apply --use_torch_compile and --use_onediff togather. we use torch compile only"
            )

        if enable_torch_compile or enable_onediff:
            if getattr(transformer, "forward") is not None:
                if enable_torch_compile:
                    if "max-autotune" in os.environ.get("TORCHINDUCTOR_MODE", ""):
                        mode = "max-autotune"
                    else:
                        mode = "max-autotune-no-cudagraphs"
                    optimized_transformer_forward = torch.compile(
                        getattr(transformer, "forward"), mode=mode
                    )
                elif enable_onediff:
                    # O3: +fp16 reduction
                    options = {"mode": "O3"}
                    try:
                        from onediffx import compile_pipe, quantize_pipe  # noqa: F401
                        from onediff.infer_compiler import compile as od_compile
                    except ImportError:
                        raise ImportError(
                            "onediff is not installed. Please install it with `pip install onediff onediffx`"
                        )
                    optimized_transformer_forward = od_compile(
                        getattr(transformer, "forward"), backend="nexfort", options=options
                    )
                setattr(transformer, "forward", optimized_transformer_forward)
            else:
                raise AttributeError(
                    f"Transformer backbone type: {transformer.__class__.__name__} has no attribute 'forward'"
                )
        return transformer

    def _convert_unet_backbone(self, unet: nn.Module):
        logger.info("UNet Backbone found")
        raise NotImplementedError("UNet parallelisation is not supported yet")

    def _convert_scheduler(self, scheduler: nn.Module):
        logger.info("Scheduler found, paralleling scheduler...")
        from xfuser.model_executor.schedulers import xFuserSchedulerWrappersRegister

        wrapper = xFuserSchedulerWrappersRegister.get_wrapper(scheduler)
        scheduler = wrapper(scheduler)
        return scheduler

    def _convert_vae(self, vae: nn.Module):
        logger.info("VAE found, paralleling vae...")
        from distvae.modules.adapters.vae.decoder_adapters import DecoderAdapter

        vae.decoder = DecoderAdapter(vae.decoder)
        return vae

    def capture_transformer_step(self, static_kwargs: Dict[str, torch.Tensor]):
        """Record one denoising step of the transformer into a CUDA graph.

        Only valid for static shapes and when no collective runs inside the
        step (i.e. naive forward); falls back to eager otherwise.
        """
        if not self.use_naive_forward():
            logger.warning("CUDA graph capture is only supported without model parallelism")
            return
        transformer = self.module.transformer
        self._static_inputs = {k: v.clone() for k, v in static_kwargs.items()}
        side_stream = torch.cuda.Stream()
        side_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side_stream):
            for _ in range(3):
                transformer(**self._static_inputs)
        torch.cuda.current_stream().wait_stream(side_stream)

        self._cuda_graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self._cuda_graph):
            self._static_output = transformer(**self._static_inputs)
        torch.cuda.synchronize()

    def replay_transformer_step(self, **kwargs):
        for k, v in kwargs.items():
            self._static_inputs[k].copy_(v)
        self._cuda_graph.replay()
        return self._static_output

    @abstractmethod
    def __call__(self):
        pass

    def _set_extra_comm_tensor_for_pipeline(
        self, extra_tensors_shape_dict: List[Tuple[str, List[int], int]] = []
    ):
        if (
            get_runtime_state().pipeline_comm_extra_tensors_info
            == extra_tensors_shape_dict
        ):
            return
        for name, shape, cnt in extra_tensors_shape_dict:
            get_pp_group().set_extra_tensors_recv_buffer(name, shape, cnt)
        get_runtime_state().pipeline_comm_extra_tensors_info = extra_tensors_shape_dict

    def _init_sync_pipeline(self, latents: torch.Tensor):
        get_runtime_state().set_patched_mode(patch_mode=False)

        latents_list = [
            latents[:, :, start_idx:end_idx, :]
            for start_idx, end_idx in get_runtime_state().pp_patches_start_end_idx_global
        ]
        latents = torch.cat(latents_list, dim=-2)
        return latents

    def _process_cfg_split_batch(
        self,
        concat_group_0_negative: torch.Tensor,
        concat_group_0: torch.Tensor,
        concat_group_1_negative: torch.Tensor,
        concat_group_1: torch.Tensor,
    ):
        if get_classifier_free_guidance_world_size() == 1:
            concat_group_0 = torch.cat([concat_group_0_negative, concat_group_0], dim=0)
            concat_group_1 = torch.cat([concat_group_1_negative, concat_group_1], dim=0)
        elif get_classifier_free_guidance_rank() == 0:
            concat_group_0 = concat_group_0_negative
            concat_group_1 = concat_group_1_negative
        elif get_classifier_free_guidance_rank() == 1:
            concat_group_0 = concat_group_0
            concat_group_1 = concat_group_1
        else:
            raise ValueError("Invalid classifier free guidance rank")
        return concat_group_0, concat_group_1

    def is_dp_last_group(self):
        """Return True if in the last data parallel group, False otherwise.
        Also include parallel vae situation.
        """
        if get_runtime_state().runtime_config.use_parallel_vae and not self.use_naive_forward():
            return get_world_group().rank == 0
        else:
            return is_dp_last_group()

    def time_call(self, **kwargs):
        """Run the pipeline and return (output, elapsed seconds) measured with CUDA events."""
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        out = self.__call__(**kwargs)
        end.record()
        end.synchronize()
        return out, start.elapsed_time(end) / 1000.0
