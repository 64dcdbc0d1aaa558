import os
from typing import Any, Dict, Optional, Sequence

import torch
from onediff.infer_compiler import compile, DeployableModule
from onediff.utils import logger

PARTS = [
    "text_encoder",
    "text_encoder_2",
    "image_encoder",
    "unet",
    "controlnet",
    "fast_unet",  # for deepcache
    "prior",  # for StableCascadePriorPipeline
    "decoder",  # for StableCascadeDecoderPipeline
    "transformer",  # for Transformer-based DiffusionPipeline such as DiTPipeline and PixArtAlphaPipeline
    "vqgan.down_blocks",  # for StableCascadeDecoderPipeline
    "vqgan.up_blocks",  # for StableCascadeDecoderPipeline
    "vae.decoder",
    "vae.encoder",
]

# Options that give the best latency on A100/H100 with nexfort; see
# onediff_diffusers_extensions/examples/text_to_image_sdxl.py for the CLI form.
DEFAULT_NEXFORT_OPTIONS = {
    "mode": "max-optimize:max-autotune:freezing",
    "memory_format": "channels_last",
    "options": {
        "inductor.optimize_linear_epilogue": False,
        "overrides.conv_benchmark": True,
        "overrides.matmul_allow_tf32": True,
    },
}


def _recursive_getattr(obj, attr, default=None):
    attrs = attr.split(".")
    for attr in attrs:
        if not hasattr(obj, attr):
            return default
        obj = getattr(obj, attr, default)
    return obj


def _recursive_setattr(obj, attr, value):
    attrs = attr.split(".")
    for attr in attrs[:-1]:
        obj = getattr(obj, attr)
    setattr(obj, attrs[-1], value)


def _filter_parts(ignores=()):
    filtered_parts = []
    for part in PARTS:
        skip = False
        for ignore in ignores:
            if part == ignore or part.startswith(ignore + "."):
                skip = True
                break
        if not skip:
            filtered_parts.append(part)

    return filtered_parts


def set_oneflow_env():
    # Half-precision accumulation in conv/matmul is where most of OneFlow's
    # speedup on consumer GPUs comes from (RTX 3090/4090).
    os.environ.setdefault("ONEFLOW_MLIR_CSE", "1")
    os.environ.setdefault("ONEFLOW_MLIR_ENABLE_INFERENCE_OPTIMIZATION", "1")
    os.environ.setdefault("ONEFLOW_MLIR_ENABLE_ROUND_TRIP", "1")
    os.environ.setdefault("ONEFLOW_MLIR_FUSE_FORWARD_OPS", "1")
    os.environ.setdefault("ONEFLOW_MLIR_FUSE_OPS_WITH_BACKWARD_IMPL", "1")
    os.environ.setdefault("ONEFLOW_MLIR_GROUP_MATMUL", "1")
    os.environ.setdefault("ONEFLOW_MLIR_PREFER_NHWC", "1")
    os.environ.setdefault("ONEFLOW_KERNEL_ENABLE_FUSED_CONV_BIAS", "1")
    os.environ.setdefault("ONEFLOW_KERNEL_ENABLE_FUSED_LINEAR", "1")
    os.environ.setdefault("ONEFLOW_KERNEL_CONV_CUTLASS_IMPL_ENABLE_TUNING_WARMUP", "1")
    os.environ.setdefault("ONEFLOW_KERNEL_CONV_ENABLE_CUTLASS_IMPL", "1")
    os.environ.setdefault("ONEFLOW_CONV_ALLOW_HALF_PRECISION_ACCUMULATION", "1")
    os.environ.setdefault("ONEFLOW_MATMUL_ALLOW_HALF_PRECISION_ACCUMULATION", "1")
    os.environ.setdefault("ONEFLOW_LINEAR_EMBEDDING_SKIP_INIT", "1")


def convert_pipe_to_memory_format(pipe, *, ignores=(), memory_format=torch.preserve_format):
    if memory_format == torch.preserve_format:
        return pipe

    for part in _filter_parts(ignores):
        obj = _recursive_getattr(pipe, part, None)
        if obj is not None:
            logger.info(f"Converting {part} to {memory_format}")
            obj.to(memory_format=memory_format)
    return pipe


def fuse_qkv_projections_in_pipe(pipe):
    if hasattr(pipe, "fuse_qkv_projections"):
        pipe.fuse_qkv_projections()
    return pipe


def compile_pipe(
    pipe,
    *,
    backend="oneflow",
    options: Optional[Dict[str, Any]] = None,
    ignores: Sequence[str] = (),
    fuse_qkv_projections: bool = False,
):
    if fuse_qkv_projections:
        pipe = fuse_qkv_projections_in_pipe(pipe)

    if backend == "oneflow":
        set_oneflow_env()

    if backend == "nexfort" and isinstance(options, dict) and "memory_format" in options:
        memory_format = getattr(torch, options["memory_format"])
        pipe = convert_pipe_to_memory_format(pipe, ignores=ignores, memory_format=memory_format)
        del options["memory_format"]

    # To fix the bug of graph load of vae. Please refer to: https://github.com/siliconflow/onediff/issues/452
    if hasattr(pipe, "upcast_vae") and pipe.vae.dtype == torch.float16 and pipe.vae.config.force_upcast:
        pipe.upcast_vae()

    filtered_parts = _filter_parts(ignores=ignores)
    for part in filtered_parts:
        obj = _recursive_getattr(pipe, part, None)
        if obj is not None:
            logger.info(f"Compiling {part}")
            _recursive_setattr(pipe, part, compile(obj, backend=backend, options=options))

    if hasattr(pipe, "image_processor") and "image_processor" not in ignores:
        logger.info("Patching image_processor")

        from onediffx.utils.patch_image_processor import patch_image_prcessor as patch_image_processor

        patch_image_processor(pipe.image_processor)

    return pipe


# TODO: Add save_pipe() and load_pipe() for backend nexfort
def save_pipe(pipe, dir="cached_pipe", *, ignores=(), overwrite=True):
    if not os.path.exists(dir):
        os.makedirs(dir)
    filtered_parts = _filter_parts(ignores=ignores)
    for part in filtered_parts:
        obj = _recursive_getattr(pipe, part, None)
        if obj is not None and isinstance(obj, DeployableModule) and obj._deployable_module_dpl_graph is not None and obj.get_graph().is_compiled:
            if not overwrite and os.path.isfile(os.path.join(dir, part)):
                logger.info(f"Compiled graph already exists for {part}, not overwriting it.")
                continue
            logger.info(f"Saving {part}")
            obj.save_graph(os.path.join(dir, part))


def load_pipe(pipe, dir="cached_pipe", *, ignores=()):
    if not os.path.exists(dir):
        return
    filtered_parts = _filter_parts(ignores=ignores)
    for part in filtered_parts:
        obj = _recursive_getattr(pipe, part, None)
        if obj is not None and os.path.exists(os.path.join(dir, part)):
            logger.info(f"Loading {part}")
            # graphs were saved from cuda:0; OneFlow rebinds them to the current device on load
            obj.load_graph(os.path.join(dir, part), run_warmup=True)

    if "image_processor" not in ignores:
        logger.info("Patching image_processor")

        from onediffx.utils.patch_image_processor import patch_image_prcessor as patch_image_processor

        patch_image_processor(pipe.image_processor)

    return pipe


def quantize_pipe(pipe, bits=8, *, ignores=(), quantize_conv=True, quantize_linear=True, **kwargs):
    """Weight-activation int8 quantization through onediff_quant (CUTLASS int8 GEMM kernels)."""
    from onediff_quant.quantization import QuantizationConfig, quantize_model

    config = QuantizationConfig.from_settings(
        quantize_conv=quantize_conv,
        quantize_linear=quantize_linear,
        bits=bits,
        inplace=True,
        **kwargs,
    )
    for part in _filter_parts(ignores=ignores):
        obj = _recursive_getattr(pipe, part, None)
        if obj is not None and isinstance(obj, torch.nn.Module):
            logger.info(f"Quantizing {part}")
            _recursive_setattr(pipe, part, quantize_model(obj, config))
    return pipe
