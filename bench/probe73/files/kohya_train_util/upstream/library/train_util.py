# common functions for training

import argparse
import ast
import datetime
import importlib
import os
import time
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import torch
from accelerate import Accelerator, InitProcessGroupKwargs, DistributedDataParallelKwargs
from diffusers import DDPMScheduler, StableDiffusionPipeline
import transformers

import library.model_util as model_util
from library.device_utils import clean_memory_on_device, init_ipex
from library.original_unet import UNet2DConditionModel
from library.utils import setup_logging

init_ipex()
setup_logging()
import logging

logger = logging.getLogger(__name__)

TOKENIZER_PATH = "openai/clip-vit-large-patch14"
V2_STABLE_DIFFUSION_PATH = "stabilityai/stable-diffusion-2"


# region arguments


def add_optimizer_arguments(parser: argparse.ArgumentParser):
    parser.add_argument(
        "--optimizer_type",
        type=str,
        default="",
        help="Optimizer to use: AdamW (default), AdamW8bit, PagedAdamW8bit, Lion8bit, Lion, SGDNesterov, "
        "DAdaptation(DAdaptAdamPreprint), DAdaptAdam, Prodigy, AdaFactor",
    )
    parser.add_argument("--use_8bit_adam", action="store_true", help="use 8bit AdamW optimizer (requires bitsandbytes)")
    parser.add_argument("--learning_rate", type=float, default=2.0e-6, help="learning rate")
    parser.add_argument("--max_grad_norm", default=1.0, type=float, help="Max gradient norm, 0 for no clipping")
    parser.add_argument("--optimizer_args", type=str, default=None, nargs="*", help='additional arguments ("weight_decay=0.01")')
    parser.add_argument("--lr_scheduler", type=str, default="constant", help="scheduler to use for learning rate")
    parser.add_argument("--lr_warmup_steps", type=int, default=0, help="Number of steps for the warmup")


def add_training_arguments(parser: argparse.ArgumentParser, support_dreambooth: bool):
    parser.add_argument("--output_dir", type=str, default=None, help="directory to output trained model")
    parser.add_argument("--train_batch_size", type=int, default=1, help="batch size for training")
    parser.add_argument("--mem_eff_attn", action="store_true", help="use memory efficient attention for CrossAttention")
    parser.add_argument("--xformers", action="store_true", help="use xformers for CrossAttention")
    parser.add_argument("--sdpa", action="store_true", help="use sdpa for CrossAttention (requires PyTorch 2.0)")
    parser.add_argument("--max_train_steps", type=int, default=1600, help="training steps")
    parser.add_argument("--max_data_loader_n_workers", type=int, default=8, help="max num workers for DataLoader")
    parser.add_argument("--seed", type=int, default=None, help="random seed for training")
    parser.add_argument("--gradient_checkpointing", action="store_true", help="enable gradient checkpointing")
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--mixed_precision", type=str, default="no", choices=["no", "fp16", "bf16"])
    parser.add_argument("--full_fp16", action="store_true", help="fp16 training including gradients")
    parser.add_argument("--full_bf16", action="store_true", help="bf16 training including gradients")
    parser.add_argument("--fp8_base", action="store_true", help="use fp8 for base model")
    parser.add_argument(
        "--ddp_timeout", type=int, default=None, help="DDP timeout (min, None for default of accelerate)"
    )
    parser.add_argument("--ddp_gradient_as_bucket_view", action="store_true")
    parser.add_argument("--log_with", type=str, default=None, choices=["tensorboard", "wandb", "all"])
    parser.add_argument("--logging_dir", type=str, default=None)
    parser.add_argument("--lowram", action="store_true", help="load model to VRAM directly (for Colab with little main RAM)")
    parser.add_argument("--highvram", action="store_true", help="disable low VRAM optimization, e.g. do not clear CUDA cache")
    parser.add_argument("--torch_compile", action="store_true", help="use torch.compile (requires PyTorch 2.0)")
    parser.add_argument(
        "--dynamo_backend",
        type=str,
        default="inductor",
        choices=["eager", "aot_eager", "inductor", "aot_ts_nvfuser", "nvprims_nvfuser", "cudagraphs", "ofi", "fx2trt", "onnxrt"],
        help="dynamo backend type (default is inductor)",
    )
    parser.add_argument("--noise_offset", type=float, default=None, help="enable noise offset with this value")
    parser.add_argument("--min_timestep", type=int, default=None)
    parser.add_argument("--max_timestep", type=int, default=None)


# endregion


def replace_unet_modules(unet: UNet2DConditionModel, mem_eff_attn, xformers, sdpa):
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

    if optimizer_type == "":
        optimizer_type = "AdamW"
    optimizer_type = optimizer_type.lower()

    optimizer_kwargs = {}
    for arg in args.optimizer_args or []:
        key, value = arg.split("=")
        optimizer_kwargs[key] = ast.literal_eval(value)

    lr = args.learning_rate
    optimizer = None

    if optimizer_type.endswith("8bit".lower()):
        try:
            import bitsandbytes as bnb
        except ImportError:
            raise ImportError("No bitsandbytes / bitsandbytesがインストールされていないようです")

        if optimizer_type == "AdamW8bit".lower():
            logger.info(f"use 8-bit AdamW optimizer | {optimizer_kwargs}")
            optimizer_class = bnb.optim.AdamW8bit
            optimizer = optimizer_class(trainable_params, lr=lr, **optimizer_kwargs)

        elif optimizer_type == "Lion8bit".lower():
            logger.info(f"use 8-bit Lion optimizer | {optimizer_kwargs}")
            try:
                optimizer_class = bnb.optim.Lion8bit
            except AttributeError:
                raise AttributeError("No Lion8bit. The version of bitsandbytes installed seems to be old. Please install 0.38.0 or later.")
            optimizer = optimizer_class(trainable_params, lr=lr, **optimizer_kwargs)

    elif optimizer_type == "PagedAdamW8bit".lower():
        try:
            import bitsandbytes as bnb
        except ImportError:
            raise ImportError("No bitsandbytes / bitsandbytesがインストールされていないようです")
        logger.info(f"use 8-bit PagedAdamW optimizer | {optimizer_kwargs}")
        try:
            optimizer_class = bnb.optim.PagedAdamW8bit
        except AttributeError:
            raise AttributeError("No PagedAdamW8bit. The version of bitsandbytes installed seems to be old. Please install 0.39.0 or later.")
        optimizer = optimizer_class(trainable_params, lr=lr, **optimizer_kwargs)

    elif optimizer_type.startswith("DAdapt".lower()) or optimizer_type == "Prodigy".lower():
        # check lr and lr_count, and logger.info warning
        actual_lr = lr
        if actual_lr <= 0.1:
            logger.warning(f"learning rate is too low. If using D-Adaptation or Prodigy, set learning rate around 1.0: lr={actual_lr}")
        if optimizer_type == "Prodigy".lower():
            import prodigyopt

            optimizer_class = prodigyopt.Prodigy
        else:
            import dadaptation

            optimizer_class = dadaptation.DAdaptAdam
        optimizer = optimizer_class(trainable_params, lr=lr, **optimizer_kwargs)

    elif optimizer_type == "Adafactor".lower():
        if "relative_step" not in optimizer_kwargs:
            optimizer_kwargs["relative_step"] = True
        optimizer_class = transformers.optimization.Adafactor
        optimizer = optimizer_class(trainable_params, lr=lr, **optimizer_kwargs)

    elif optimizer_type == "AdamW".lower():
        logger.info(f"use AdamW optimizer | {optimizer_kwargs}")
        optimizer_class = torch.optim.AdamW
        optimizer = optimizer_class(trainable_params, lr=lr, **optimizer_kwargs)

    optimizer_name = optimizer_class.__module__ + "." + optimizer_class.__name__
    optimizer_args = ",".join([f"{k}={v}" for k, v in optimizer_kwargs.items()])
    return optimizer_name, optimizer_args, optimizer


def prepare_accelerator(args: argparse.Namespace):
    if args.logging_dir is None:
        logging_dir = None
    else:
        log_prefix = "" if args.log_prefix is None else args.log_prefix
        logging_dir = args.logging_dir + "/" + log_prefix + time.strftime("%Y%m%d%H%M%S", time.localtime())

    if args.log_with is None:
        log_with = "tensorboard" if logging_dir is not None else None
    else:
        log_with = args.log_with

    kwargs_handlers = (
        InitProcessGroupKwargs(timeout=datetime.timedelta(minutes=args.ddp_timeout)) if args.ddp_timeout else None,
        (
            DistributedDataParallelKwargs(
                gradient_as_bucket_view=args.ddp_gradient_as_bucket_view, static_graph=False
            )
            if args.ddp_gradient_as_bucket_view
            else None
        ),
    )
    kwargs_handlers = list(filter(lambda x: x is not None, kwargs_handlers))

    dynamo_backend = "NO"
    if args.torch_compile:
        dynamo_backend = args.dynamo_backend

    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        mixed_precision=args.mixed_precision,
        log_with=log_with,
        project_dir=logging_dir,
        kwargs_handlers=kwargs_handlers,
        dynamo_backend=dynamo_backend,
    )
    print("accelerator device:", accelerator.device)
    return accelerator


def prepare_dtype(args: argparse.Namespace):
    weight_dtype = torch.float32
    if args.mixed_precision == "fp16":
        weight_dtype = torch.float16
    elif args.mixed_precision == "bf16":
        weight_dtype = torch.bfloat16

    save_dtype = torch.float16 if args.save_precision == "fp16" else None
    return weight_dtype, save_dtype


def _load_target_model(args: argparse.Namespace, weight_dtype, device="cpu", unet_use_linear_projection_in_v2=False):
    name_or_path = args.pretrained_model_name_or_path
    name_or_path = os.path.realpath(name_or_path) if os.path.islink(name_or_path) else name_or_path
    load_stable_diffusion_format = os.path.isfile(name_or_path)  # determine SD or Diffusers
    if load_stable_diffusion_format:
        logger.info(f"load StableDiffusion checkpoint: {name_or_path}")
        text_encoder, vae, unet = model_util.load_models_from_stable_diffusion_checkpoint(
            args.v2, name_or_path, device, unet_use_linear_projection_in_v2=unet_use_linear_projection_in_v2
        )
    else:
        logger.info(f"load Diffusers pretrained models: {name_or_path}")
        pipe = StableDiffusionPipeline.from_pretrained(name_or_path, tokenizer=None, safety_checker=None)
        text_encoder = pipe.text_encoder
        vae = pipe.vae
        unet = pipe.unet
        del pipe

    return text_encoder, vae, unet, load_stable_diffusion_format


def load_target_model(args, weight_dtype, accelerator, unet_use_linear_projection_in_v2=False):
    for pi in range(accelerator.state.num_processes):
        if pi == accelerator.state.local_process_index:
            logger.info(f"loading model for process {accelerator.state.local_process_index}/{accelerator.state.num_processes}")

            text_encoder, vae, unet, load_stable_diffusion_format = _load_target_model(
                args,
                weight_dtype,
                "cuda" if args.lowram else "cpu",
                unet_use_linear_projection_in_v2=unet_use_linear_projection_in_v2,
            )

            # work on low-ram device
            if args.lowram:
                text_encoder.to(accelerator.device)
                unet.to(accelerator.device)
                vae.to(accelerator.device)

            clean_memory_on_device(accelerator.device)
        accelerator.wait_for_everyone()
    return text_encoder, vae, unet, load_stable_diffusion_format


def patch_accelerator_for_fp16_training(accelerator):
    org_unscale_grads = accelerator.scaler._unscale_grads_

    def _unscale_grads_replacer(optimizer, inv_scale, found_inf, allow_fp16):
        return org_unscale_grads(optimizer, inv_scale, found_inf, True)

    accelerator.scaler._unscale_grads_ = _unscale_grads_replacer


def get_noise_noisy_latents_and_timesteps(args, noise_scheduler, latents):
    noise = torch.randn_like(latents, device=latents.device)
    if args.noise_offset:
        noise = noise + args.noise_offset * torch.randn((latents.shape[0], latents.shape[1], 1, 1), device=latents.device)

    b_size = latents.shape[0]
    min_timestep = 0 if args.min_timestep is None else args.min_timestep
    max_timestep = noise_scheduler.config.num_train_timesteps if args.max_timestep is None else args.max_timestep

    timesteps = torch.randint(min_timestep, max_timestep, (b_size,), device=latents.device)
    timesteps = timesteps.long()

    noisy_latents = noise_scheduler.add_noise(latents, noise, timesteps)
    return noise, noisy_latents, timesteps


def cache_batch_latents(vae, cache_to_disk: bool, image_infos: List, flip_aug: bool, random_crop: bool) -> None:
    images = []
    for info in image_infos:
        image = info.image
        images.append(image)

    img_tensors = torch.stack(images, dim=0)
    img_tensors = img_tensors.to(device=vae.device, dtype=vae.dtype)

    with torch.no_grad():
        latents = vae.encode(img_tensors).latent_dist.sample().to("cpu")

    flipped_latents = [None] * len(latents)  # flip_aug handled by the dataset

    for info, latent, flipped_latent in zip(image_infos, latents, flipped_latents):
        if cache_to_disk:
            np.savez(info.latents_npz, latents=latent.float().numpy())
        else:
            info.latents = latent
            if flip_aug:
                info.latents_flipped = flipped_latent

    if not HIGH_VRAM:
        clean_memory_on_device(vae.device)


HIGH_VRAM = False


def sample_images_common(pipe_class, accelerator, args, epoch, steps, device, vae, tokenizer, text_encoder, unet, prompt_replacement=None):
    """
    StableDiffusionLongPromptWeightingPipelineの改造版を使うようにしたので、clip skipおよびプロンプトの重みづけに対応した
    """
    if steps == 0:
        if not args.sample_at_first:
            return
    else:
        if args.sample_every_n_steps is None and args.sample_every_n_epochs is None:
            return

    logger.info("")
    logger.info(f"generating sample images at step / サンプル画像生成 ステップ: {steps}")

    distributed_state = accelerator.state
    org_vae_device = vae.device  # CPUにいるはず
    vae.to(distributed_state.device)  # distributed_state.device is same as accelerator.device

    unet = accelerator.unwrap_model(unet)
    text_encoder = accelerator.unwrap_model(text_encoder)

    # save random state to restore later
    rng_state = torch.get_rng_state()
    cuda_rng_state = None
    try:
        cuda_rng_state = torch.cuda.get_rng_state() if torch.cuda.is_available() else None
    except Exception:
        pass

    pipeline = pipe_class(
        text_encoder=text_encoder,
        vae=vae,
        unet=unet,
        tokenizer=tokenizer,
        scheduler=DDPMScheduler.from_pretrained(V2_STABLE_DIFFUSION_PATH, subfolder="scheduler"),
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
        clip_skip=args.clip_skip,
    )
    pipeline.to(distributed_state.device)
    save_dir = args.output_dir + "/sample"
    os.makedirs(save_dir, exist_ok=True)

    with torch.no_grad(), accelerator.autocast():
        for prompt_dict in args.sample_prompts_list:
            seed = prompt_dict.get("seed")
            if seed is not None:
                torch.manual_seed(seed)
                torch.cuda.manual_seed(seed)
            image = pipeline(prompt_dict["prompt"], num_inference_steps=prompt_dict.get("sample_steps", 30)).images[0]
            ts_str = time.strftime("%Y%m%d%H%M%S", time.localtime())
            image.save(os.path.join(save_dir, f"{args.output_name}_{steps:06d}_{ts_str}.png"))

    del pipeline

    # I'm not sure which of these is the correct way to clear the memory, but accelerator's device is used in the pipeline, so I'm using it here.
    with torch.cuda.device(torch.cuda.current_device()):
        torch.cuda.empty_cache()

    torch.set_rng_state(rng_state)
    if cuda_rng_state is not None:
        torch.cuda.set_rng_state(cuda_rng_state)
    vae.to(org_vae_device)

    clean_memory_on_device(accelerator.device)
