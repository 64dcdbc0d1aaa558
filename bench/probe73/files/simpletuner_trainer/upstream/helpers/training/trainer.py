import copy
import gc
import glob
import hashlib
import json
import logging
import math
import os
import random
import shutil
import sys
from datetime import timedelta
from pathlib import Path

import huggingface_hub
import torch
import transformers
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import DistributedDataParallelKwargs, InitProcessGroupKwargs, ProjectConfiguration, set_seed

from helpers.configuration.loader import load_config
from helpers.data_backend.factory import configure_multi_databackend, random_dataloader_iterator
from helpers.models.common import ModelFoundation
from helpers.training.attention import enable_sageattention, disable_sageattention
from helpers.training.custom_schedule import get_lr_scheduler
from helpers.training.min_snr_gamma import compute_snr
from helpers.training.multi_process import _get_rank as get_rank
from helpers.training.optimizer_param import determine_optimizer_class_with_config, is_lr_scheduler_disabled
from helpers.training.quantisation import quantise_model
from helpers.training.state_tracker import StateTracker
from helpers.training.validation import Validation

logger = get_logger("SimpleTuner", log_level=os.environ.get("SIMPLETUNER_LOG_LEVEL", "INFO"))

# Disable the Triton autotuner log spam
logging.getLogger("torch._inductor.autotune_process").setLevel(logging.ERROR)

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True

SCHEDULER_NAME_MAP = {
    "euler": "EulerDiscreteScheduler",
    "euler-a": "EulerAncestralDiscreteScheduler",
    "unipc": "UniPCMultistepScheduler",
    "ddim": "DDIMScheduler",
    "ddpm": "DDPMScheduler",
}


class Trainer:
    def __init__(self, config: dict = None, disable_accelerator: bool = False, job_id: str = None):
        self.accelerator = None
        self.job_id = job_id
        StateTracker.set_job_id(job_id)
        self.parse_arguments(args=config, disable_accelerator=disable_accelerator)
        self._misc_init()
        self.lycoris_wrapped_network = None
        self.lycoris_config = None
        self.lr_scheduler = None
        self.webhook_handler = None
        self.should_abort = False
        self.ema_model = None
        self.validation = None
        self.unet = None
        self.transformer = None
        self.vae = None

    def _get_device(self):
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")

    def parse_arguments(self, args=None, disable_accelerator: bool = False):
        self.config = load_config(args)
        report_to = None if self.config.report_to.lower() == "none" else self.config.report_to
        if not disable_accelerator:
            accelerator_custom_config = [
                DistributedDataParallelKwargs(find_unused_parameters=self.config.ddp_find_unused_parameters),
                InitProcessGroupKwargs(backend="nccl", timeout=timedelta(seconds=self.config.nccl_timeout)),
            ]
            if self.config.mixed_precision == "fp8":
                from accelerate.utils import FP8RecipeKwargs

                accelerator_custom_config.append(FP8RecipeKwargs(backend="te"))

            self.accelerator = Accelerator(
                gradient_accumulation_steps=self.config.gradient_accumulation_steps,
                mixed_precision=("no" if self.config.mixed_precision == "bf16" else self.config.mixed_precision),
                log_with=report_to,
                project_config=ProjectConfiguration(project_dir=self.config.output_dir, logging_dir=self.config.logging_dir),
                kwargs_handlers=accelerator_custom_config,
                dynamo_backend=os.environ.get("TRAINING_DYNAMO_BACKEND", "no"),
            )
        StateTracker.set_accelerator(self.accelerator)

    def _misc_init(self):
        """things that do not really need an order."""
        torch.set_num_threads(self.config.torch_num_threads)
        self.state = {}
        self.state["lr"] = 0.0
        # Global step represents the most recently *completed* optimization step, which means it
        #  takes into account the number of gradient_accumulation_steps. If we use 1 gradient_accumulation_step,
        #  then global step and step will be the same throughout training. However, if we use
        #  2 gradient_accumulation_steps, then global step will be twice as slow as step.
        self.state["global_step"] = 0
        self.state["global_resume_step"] = 0
        self.state["first_epoch"] = 1
        self.timesteps_buffer = []
        self.guidance_values_list = []
        self.train_loss = 0.0
        self.bf = None
        self.grad_norm = None
        self.extra_lr_scheduler_kwargs = {}
        StateTracker.set_global_step(self.state["global_step"])
        self.config.use_deepspeed_optimizer, self.config.use_deepspeed_scheduler = prepare_model_for_deepspeed(self.accelerator, self.config)
        self.config.base_weight_dtype = self.config.weight_dtype
        self.config.is_quanto = "quanto" in self.config.base_model_precision
        self.config.is_torchao = "torchao" in self.config.base_model_precision
        self.config.is_bnb = "bnb" in self.config.base_model_precision

    def init_seed(self):
        seed = self.config.seed
        if seed is not None and seed != 0:
            set_seed(seed, self.config.seed_for_each_device)

    def init_precision(self, preprocessing_models_only: bool = False, ema_only: bool = False):
        self.config.enable_adamw_bf16 = True if self.config.weight_dtype == torch.bfloat16 else False
        quantization_device = "cpu" if self.config.quantize_via == "cpu" else self.accelerator.device

        if "bnb" in self.config.base_model_precision:
            # can't cast or move bitsandbytes models
            return

        if not self.config.disable_accelerator and self.config.is_quantized:
            if self.config.base_model_default_dtype == "fp32":
                self.config.base_weight_dtype = torch.float32
                self.config.enable_adamw_bf16 = False
            elif self.config.base_model_default_dtype == "bf16":
                self.config.base_weight_dtype = torch.bfloat16
                self.config.enable_adamw_bf16 = True
            if not preprocessing_models_only:
                logger.info(f"Moving {self.model.MODEL_TYPE.value} to dtype={self.config.base_weight_dtype}, device={quantization_device}")
                self.model.model.to(quantization_device, dtype=self.config.base_weight_dtype)

        if self.config.is_quanto:
            with self.accelerator.local_main_process_first():
                if ema_only:
                    self.quantise_model(ema=self.ema_model, args=self.config)
                    return
                self.quantise_model(model=self.model.model if not preprocessing_models_only else None, args=self.config)

    def init_attention(self):
        attention_mechanism = self.config.attention_mechanism
        if attention_mechanism == "xformers":
            logger.info("Enabling xformers memory-efficient attention.")
            if self.model.model is not None:
                self.model.model.enable_xformers_memory_efficient_attention()
            if self.vae is not None:
                self.vae.enable_xformers_memory_efficient_attention()
        elif attention_mechanism.startswith("sageattention"):
            if "training" in self.config.sageattention_usage:
                logger.warning(
                    "Using SageAttention for training. This is an unsupported, experimental configuration. Gradients will be incorrect."
                )
            enable_sageattention(attention_mechanism)
        elif attention_mechanism == "diffusers":
            # default: torch SDPA through the diffusers AttnProcessor2_0
            pass

    def init_vae(self, move_to_accelerator: bool = True):
        if self.model.AUTOENCODER_CLASS is None:
            return
        self.config.vae_kwargs = {
            "pretrained_model_name_or_path": self.config.vae_path,
            "subfolder": "vae",
            "revision": self.config.revision,
            "force_upcast": False,
            "variant": self.config.variant,
        }
        self.model.load_vae(move_to_device=move_to_accelerator)
        self.vae = self.model.get_vae()
        if self.vae is not None and self.config.vae_enable_tiling:
            self.vae.enable_tiling()
        if self.vae is not None and self.config.vae_enable_slicing:
            self.vae.enable_slicing()

    def _get_memory_stats(self) -> dict:
        if not torch.cuda.is_available():
            return {}
        return {
            "memory/allocated_gb": torch.cuda.memory_allocated() / 1024**3,
            "memory/peak_gb": torch.cuda.max_memory_allocated() / 1024**3,
            "memory/reserved_gb": torch.cuda.memory_reserved() / 1024**3,
        }

    def init_benchmark_base_model(self):
        if self.config.disable_benchmark or self.validation is None or self.validation.benchmark_exists("base_model"):
            return
        logger.info("Benchmarking base model for comparison. Supply `--disable_benchmark: true` to disable this behaviour.")
        torch.cuda.reset_peak_memory_stats()
        self.validation.run_validations(validation_type="base_model", step=0)
        peak = torch.cuda.max_memory_allocated() / 1024**3
        logger.info(f"Base model benchmark peak VRAM: {peak:.2f} GiB")

    def move_models(self, destination: str = "accelerator"):
        target_device = "cpu"
        if destination == "accelerator":
            target_device = self.accelerator.device
        logger.info(f"Moving the {str(self.model.model.__class__)} to GPU in {self.config.weight_dtype if not self.config.is_quantized else self.config.base_model_precision} precision.")
        if self.model.model is not None and not self.config.is_quantized:
            self.model.model.to(target_device, dtype=self.config.weight_dtype)
        elif self.model.model is not None:
            self.model.model.to(target_device)
        if getattr(self.accelerator, "_lycoris_wrapped_network", None) is not None:
            self.accelerator._lycoris_wrapped_network = self.accelerator._lycoris_wrapped_network.to(target_device, dtype=self.config.weight_dtype)

        if self.config.enable_xformers_memory_efficient_attention and self.config.attention_mechanism != "xformers":
            logger.warning("xformers attention requested but attention_mechanism is not xformers; ignoring")

        if self.config.controlnet:
            self.model.get_trained_component().train()
            self.model.unwrap_model(self.model.model).train()

    def enable_sageattention_inference(self):
        # if the sageattention is inference-only, we'll enable it.
        # if it's training only, we'll disable it.
        # if it's inference+training, we leave it alone.
        if "sageattention" not in self.config.attention_mechanism or self.config.sageattention_usage == "training+inference":
            return
        if self.config.sageattention_usage == "inference":
            self.enable_sageattention()
        if self.config.sageattention_usage == "training":
            self.disable_sageattention()

    def init_validations(self):
        if self.accelerator.is_main_process:
            self.validation = Validation(
                trainable_parameters=self._get_trainable_parameters,
                accelerator=self.accelerator,
                model=self.model,
                distiller=None,
                args=self.config,
                validation_prompt_metadata=self.validation_prompt_metadata,
                vae_path=self.config.vae_path,
                weight_dtype=self.config.weight_dtype,
                embed_cache=StateTracker.get_default_text_embed_cache(),
                ema_model=self.ema_model,
                model_evaluator=None,
                is_deepspeed=self.config.use_deepspeed_optimizer,
                is_fsdp=False,
            )

    def _clear_cache(self):
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
            torch.cuda.ipc_collect()
        elif torch.backends.mps.is_available():
            torch.mps.empty_cache()

    def train_step(self, batch):
        with self.accelerator.accumulate(self.model.get_trained_component()):
            latents = batch["latent_batch"].to(self.accelerator.device, dtype=self.config.weight_dtype)
            noise = torch.randn_like(latents)
            bsz = latents.shape[0]
            timesteps = torch.randint(0, self.noise_scheduler.config.num_train_timesteps, (bsz,), device=latents.device).long()
            noisy_latents = self.noise_scheduler.add_noise(latents, noise, timesteps)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.config.mixed_precision == "bf16"):
                model_pred = self.model.model_predict(
                    prepared_batch={"noisy_latents": noisy_latents, "timesteps": timesteps, **batch},
                )["model_prediction"]
            target = noise
            loss = torch.nn.functional.mse_loss(model_pred.float(), target.float(), reduction="mean")
            self.accelerator.backward(loss)
            if self.accelerator.sync_gradients and self.config.max_grad_norm > 0:
                self.grad_norm = self.accelerator.clip_grad_norm_(self._get_trainable_parameters(), self.config.max_grad_norm)
            self.optimizer.step()
            self.lr_scheduler.step()
            self.optimizer.zero_grad(set_to_none=self.config.set_grads_to_none)
        return loss.detach()

    def train(self):
        self.init_seed()
        self._clear_cache()
        progress_bar_step = 0
        for epoch in range(self.state["first_epoch"], self.config.num_train_epochs + 1):
            for step, batch in random_dataloader_iterator(self.train_dataloaders):
                loss = self.train_step(batch)
                if self.accelerator.sync_gradients:
                    self.state["global_step"] += 1
                    progress_bar_step += 1
                    logs = {"train_loss": loss.item(), "lr": float(self.lr_scheduler.get_last_lr()[0])}
                    logs.update(self._get_memory_stats())
                    if self.grad_norm is not None:
                        logs["grad_norm"] = float(self.grad_norm)
                    self.accelerator.log(logs, step=self.state["global_step"])
                    if self.validation is not None:
                        self.enable_sageattention_inference()
                        self.validation.run_validations(validation_type="intermediary", step=self.state["global_step"])
                        self.disable_sageattention_inference()
                if self.state["global_step"] >= self.config.max_train_steps:
                    break
        self.accelerator.wait_for_everyone()
        self.accelerator.end_training()


def prepare_model_for_deepspeed(accelerator, args):
    use_deepspeed_optimizer = False
    use_deepspeed_scheduler = False
    if (
        hasattr(accelerator, "state")
        and hasattr(accelerator.state, "deepspeed_plugin")
        and getattr(accelerator.state, "deepspeed_plugin") is not None
    ):
        offload_param = accelerator.state.deepspeed_plugin.deepspeed_config["zero_optimization"]["offload_param"]
        accelerator.state.deepspeed_plugin.deepspeed_config["zero_optimization"]["offload_param"]["pin_memory"] = False
        if offload_param["device"] == "nvme":
            if offload_param["nvme_path"] == "none":
                if args.offload_param_path is None:
                    raise ValueError("DeepSpeed is using {offload_param['device']} but nvme_path is not specified.")
                accelerator.state.deepspeed_plugin.deepspeed_config["zero_optimization"]["offload_param"]["nvme_path"] = args.offload_param_path
            logger.info(f"Using DeepSpeed NVMe offload at {accelerator.state.deepspeed_plugin.deepspeed_config['zero_optimization']['offload_param']['nvme_path']}.")

        use_deepspeed_optimizer = True
        if "optimizer" not in accelerator.state.deepspeed_plugin.deepspeed_config:
            logger.info("Using DeepSpeed optimizer (AdamW).")
            accelerator.state.deepspeed_plugin.deepspeed_config["optimizer"] = {
                "type": "AdamW",
                "params": {"lr": args.learning_rate, "betas": [args.adam_beta1, args.adam_beta2], "eps": args.adam_epsilon, "weight_decay": args.adam_weight_decay},
            }

        use_deepspeed_scheduler = True
        if "scheduler" not in accelerator.state.deepspeed_plugin.deepspeed_config:
            logger.info("Using DeepSpeed scheduler (WarmupLR).")
            accelerator.state.deepspeed_plugin.deepspeed_config["scheduler"] = {
                "type": "WarmupLR",
                "params": {"warmup_min_lr": 0, "warmup_max_lr": args.learning_rate, "warmup_num_steps": args.lr_warmup_steps},
            }
    return use_deepspeed_optimizer, use_deepspeed_scheduler
