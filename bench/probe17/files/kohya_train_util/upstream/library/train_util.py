# common functions for training (excerpt: optimizer, attention and precision helpers)

import argparse
import ast
import importlib
import logging
import math
import os
import time

import torch
from accelerate import Accelerator, InitProcessGroupKwargs
from datetime import timedelta

from library.device_utils import clean_memory_on_device, init_ipex

init_ipex()

logger = logging.getLogger(__name__)


def add_optimizer_arguments(parser: argparse.ArgumentParser):
    parser.add_argument(
        "--optimizer_type",
        type=str,
        default="",
        help="Optimizer to use: AdamW (default), AdamW8bit, PagedAdamW8bit, Lion8bit, Lion, SGDNesterov, "
        "DAdaptation, Prodigy, AdaFactor. Note: the 8bit optimizers need bitsandbytes and a CUDA GPU",
    )
    parser.add_argument("--use_8bit_adam", action="store_true",
                        help="use 8bit AdamW optimizer (requires bitsandbytes)")
    parser.add_argument("--learning_rate", type=float, default=2.0e-6, help="learning rate")
    parser.add_argument("--max_grad_norm", default=1.0, type=float, help="Max gradient norm, 0 for no clipping")
    parser.add_argument("--optimizer_args", type=str, default=None, nargs="*",
                        help='additional arguments for optimizer (like "weight_decay=0.01 betas=0.9,0.999 ...")')


def add_training_arguments(parser: argparse.ArgumentParser, support_dreambooth: bool):
    parser.add_argument("--mem_eff_attn", action="store_true",
                        help="use memory efficient attention for CrossAttention")
    parser.add_argument("--xformers", action="store_true", help="use xformers for CrossAttention")
    parser.add_argument("--sdpa", action="store_true", help="use sdpa for CrossAttention (requires PyTorch 2.0)")
    parser.add_argument("--mixed_precision", type=str, default="no", choices=["no", "fp16", "bf16"],
                        help="use mixed precision")
    parser.add_argument("--full_fp16", action="store_true", help="fp16 training including gradients")
    parser.add_argument("--full_bf16", action="store_true", help="bf16 training including gradients")
    parser.add_argument("--ddp_timeout", type=int, default=None,
                        help="DDP timeout (min, None for default of accelerate)")
    parser.add_argument("--lowram", action="store_true",
                        help="enable low RAM optimization, e.g. load models to VRAM instead of RAM")


def replace_unet_modules(unet, mem_eff_attn, xformers, sdpa):
    if mem_eff_attn:
        logger.info("Enable memory efficient attention for U-Net")
        unet.set_use_memory_efficient_attention(False, True)
    elif xformers:
        logger.info("Enable xformers for U-Net")
        try:
            import xformers.ops
        except ImportError:
            raise ImportError("No xformers / xformersがインストールされていないようです")

        unet.set_use_memory_efficient_attention(True, False)
    elif sdpa:
        logger.info("Enable SDPA for U-Net")
        unet.set_use_sdpa(True)


def get_optimizer(args, trainable_params):
    optimizer_type = args.optimizer_type
    if args.use_8bit_adam:
        assert not args.use_lion_optimizer, "both option use_8bit_adam and use_lion_optimizer are specified"
        optimizer_type = "AdamW8bit"
    elif optimizer_type == "":
        optimizer_type = "AdamW"
    optimizer_type = optimizer_type.lower()

    optimizer_kwargs = {}
    if args.optimizer_args is not None and len(args.optimizer_args) > 0:
        for arg in args.optimizer_args:
            key, value = arg.split("=")
            value = ast.literal_eval(value)
            optimizer_kwargs[key] = value

    lr = args.learning_rate
    optimizer = None

    if optimizer_type == "AdamW8bit".lower():
        try:
            import bitsandbytes as bnb
        except ImportError:
            raise ImportError("No bitsandbytes / bitsandbytesがインストールされていないようです")
        logger.info(f"use 8-bit AdamW optimizer | {optimizer_kwargs}")
        optimizer_class = bnb.optim.AdamW8bit
        optimizer = optimizer_class(trainable_params, lr=lr, **optimizer_kwargs)

    elif optimizer_type == "PagedAdamW8bit".lower():
        try:
            import bitsandbytes as bnb
        except ImportError:
            raise ImportError("No bitsandbytes / bitsandbytesがインストールされていないようです")
        logger.info(f"use 8-bit PagedAdamW optimizer | {optimizer_kwargs}")
        optimizer_class = bnb.optim.PagedAdamW8bit
        optimizer = optimizer_class(trainable_params, lr=lr, **optimizer_kwargs)

    elif optimizer_type == "Lion".lower():
        try:
            import lion_pytorch
        except ImportError:
            raise ImportError("No lion_pytorch / lion_pytorch がインストールされていないようです")
        logger.info(f"use Lion optimizer | {optimizer_kwargs}")
        optimizer = lion_pytorch.Lion(trainable_params, lr=lr, **optimizer_kwargs)

    elif optimizer_type == "AdaFactor".lower():
        import transformers

        if "relative_step" not in optimizer_kwargs:
            optimizer_kwargs["relative_step"] = True
        logger.info(f"use Adafactor optimizer | {optimizer_kwargs}")
        optimizer = transformers.optimization.Adafactor(trainable_params, lr=None, **optimizer_kwargs)

    elif optimizer_type == "AdamW".lower():
        logger.info(f"use AdamW optimizer | {optimizer_kwargs}")
        optimizer_class = torch.optim.AdamW
        optimizer = optimizer_class(trainable_params, lr=lr, **optimizer_kwargs)

    if optimizer is None:
        raise ValueError(f"Unknown optimizer type: {optimizer_type}")

    optimizer_name = optimizer.__class__.__module__ + "." + optimizer.__class__.__name__
    optimizer_args = ",".join([f"{k}={v}" for k, v in optimizer_kwargs.items()])
    return optimizer_name, optimizer_args, optimizer


def prepare_dtype(args: argparse.Namespace):
    weight_dtype = torch.float32
    if args.mixed_precision == "fp16":
        weight_dtype = torch.float16
    elif args.mixed_precision == "bf16":
        weight_dtype = torch.bfloat16

    save_dtype = None
    if args.save_precision == "fp16":
        save_dtype = torch.float16
    elif args.save_precision == "bf16":
        save_dtype = torch.bfloat16
    elif args.save_precision == "float":
        save_dtype = torch.float32
    return weight_dtype, save_dtype


def prepare_accelerator(args: argparse.Namespace):
    kwargs_handlers = (
        InitProcessGroupKwargs(timeout=timedelta(minutes=args.ddp_timeout)) if args.ddp_timeout else None,
    )
    kwargs_handlers = list(filter(lambda x: x is not None, kwargs_handlers))
    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        mixed_precision=args.mixed_precision,
        log_with=None if args.log_with is None else args.log_with,
        project_dir=args.logging_dir,
        kwargs_handlers=kwargs_handlers,
    )
    print("accelerator device:", accelerator.device)
    return accelerator


def patch_accelerator_for_fp16_training(accelerator):
    org_unscale_grads = accelerator.scaler._unscale_grads_

    def _unscale_grads_replacer(optimizer, inv_scale, found_inf, allow_fp16):
        return org_unscale_grads(optimizer, inv_scale, found_inf, True)

    accelerator.scaler._unscale_grads_ = _unscale_grads_replacer


def sample_images_common(accelerator, args, epoch, steps, device, vae, tokenizer, text_encoder, unet):
    if steps == 0 and not args.sample_at_first:
        return
    distributed_state = accelerator.state
    org_vae_device = vae.device
    vae.to(distributed_state.device)
    rng_state = torch.get_rng_state()
    cuda_rng_state = torch.cuda.get_rng_state() if torch.cuda.is_available() else None

    # ... sampling loop elided ...
    time.sleep(0)

    torch.set_rng_state(rng_state)
    if cuda_rng_state is not None:
        torch.cuda.set_rng_state(cuda_rng_state)
    vae.to(org_vae_device)
    clean_memory_on_device(accelerator.device)
