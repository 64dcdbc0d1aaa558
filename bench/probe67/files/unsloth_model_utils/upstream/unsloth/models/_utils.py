# Copyright 2023-present Daniel Han-Chen & the Unsloth team. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
__version__ = "2024.8"

import gc
import os
import platform
import warnings

import numpy as np
import torch
import transformers
from packaging.version import Version

__all__ = [
    "SUPPORTS_BFLOAT16",
    "HAS_FLASH_ATTENTION",
    "xformers",
    "xformers_attention",
    "prepare_model_for_kbit_training",
    "offload_to_disk",
    "patch_tokenizer",
    "unsloth_offloaded_gradient_checkpoint",
]

# =============================================
# Disable some warnings which can get annoying
warnings.filterwarnings(action="ignore", category=UserWarning, module="torch")
warnings.filterwarnings(action="ignore", category=FutureWarning, module="huggingface_hub")
os.environ["TOKENIZERS_PARALLELISM"] = "false"
# =============================================

# Get Flash Attention v2 if Ampere (RTX 30xx, A100)
major_version, minor_version = torch.cuda.get_device_capability()
SUPPORTS_BFLOAT16 = False
HAS_FLASH_ATTENTION = False

if major_version >= 8:
    SUPPORTS_BFLOAT16 = True
    try:
        from flash_attn.flash_attn_interface import flash_attn_cuda
        HAS_FLASH_ATTENTION = True
    except Exception:
        print("Unsloth: Your Flash Attention 2 installation seems to be broken. "
              "Using Xformers instead. No performance changes will be seen.")
        HAS_FLASH_ATTENTION = False
else:
    # Tri Dao's benchmark shows xformers is faster for now.
    HAS_FLASH_ATTENTION = False

import xformers.ops.fmha as xformers
xformers_attention = xformers.memory_efficient_attention
xformers_version = xformers.__version__

# Check TRL version
from trl import __version__ as trl_version

# =============================================
# Offloaded gradient checkpointing: keep activations in pinned host memory
# =============================================
torch_amp_custom_fwd = torch.cuda.amp.custom_fwd
torch_amp_custom_bwd = torch.cuda.amp.custom_bwd


class Unsloth_Offloaded_Gradient_Checkpointer(torch.autograd.Function):
    """
    Saves VRAM by smartly offloading to RAM.
    Tiny hit to performance, since we mask the movement via non blocking calls.
    """

    @staticmethod
    @torch_amp_custom_fwd
    def forward(ctx, forward_function, hidden_states, *args):
        saved_hidden_states = hidden_states.to("cpu", non_blocking=True)
        with torch.no_grad():
            output = forward_function(hidden_states, *args)
        ctx.save_for_backward(saved_hidden_states)
        ctx.forward_function = forward_function
        ctx.args = args
        return output

    @staticmethod
    @torch_amp_custom_bwd
    def backward(ctx, dY):
        (hidden_states,) = ctx.saved_tensors
        hidden_states = hidden_states.to("cuda:0", non_blocking=True).detach()
        hidden_states.requires_grad = True
        with torch.enable_grad():
            (output,) = ctx.forward_function(hidden_states, *ctx.args)
        torch.autograd.backward(output, dY)
        return (None, hidden_states.grad,) + (None,) * len(ctx.args)


@torch._disable_dynamo
def unsloth_offloaded_gradient_checkpoint(function, *args, use_reentrant=None, **kwargs):
    return Unsloth_Offloaded_Gradient_Checkpointer.apply(function, *args)


def prepare_model_for_kbit_training(model, use_gradient_checkpointing=True, use_reentrant=True):
    # Freeze all parameters except LoRA
    with torch.no_grad():
        for name, param in model.named_parameters():
            if ".lora_A." in name or ".lora_B." in name or ".lora_magnitude_vector" in name:
                param.requires_grad_(True)
                # Also must be in float32!
                if param.dtype != torch.float32:
                    name = name.replace("base_model", "model", 1)
                    layer_number = name.find(".layers.") + len(".layers.")
                    param.data = param.data.float()
            else:
                param.requires_grad_(False)

    if use_gradient_checkpointing == "unsloth":
        # Saves VRAM!
        original_model = model
        while hasattr(original_model, "model"):
            original_model._offloaded_gradient_checkpointing = True
            original_model = original_model.model
        original_model._offloaded_gradient_checkpointing = True

    # If use_reentrant = True which is the Pytorch default, we just make the input requires_grad.
    if use_reentrant:
        if hasattr(model, "enable_input_require_grads"):
            model.enable_input_require_grads()
    return model


def print_banner(model_name, max_seq_length, max_memory_reserved=None):
    gpu_stats = torch.cuda.get_device_properties(0)
    max_memory = round(gpu_stats.total_memory / 1024 / 1024 / 1024, 3)
    statistics = (
        f"==((====))==  Unsloth {__version__}: Fast {model_name} patching. Transformers = {transformers.__version__}.\n"
        f"   \\\\   /|    GPU: {gpu_stats.name}. Max memory: {max_memory} GB. Platform = {platform.system()}.\n"
        f"O^O/ \\_/ \\    Pytorch: {torch.__version__}. CUDA = {gpu_stats.major}.{gpu_stats.minor}. CUDA Toolkit = {torch.version.cuda}.\n"
        f"\\        /    Bfloat16 = {str(SUPPORTS_BFLOAT16).upper()}. FA [Xformers = {xformers_version}. FA2 = {HAS_FLASH_ATTENTION}]\n"
        f' "-____-"     Free Apache license: http://github.com/unslothai/unsloth'
    )
    print(statistics)


def offload_to_disk(W, model, name, temporary_location: str = "_unsloth_temporary_saved_buffers"):
    file_location = os.path.join(temporary_location, model.config._name_or_path)
    if not os.path.exists(file_location):
        os.makedirs(file_location)
    filename = os.path.join(file_location, f"{name}.pt")
    W = W.weight if hasattr(W, "weight") else W
    torch.save(W, filename, pickle_module=None, pickle_protocol=2)
    offloaded_W = torch.load(filename, map_location="cpu", mmap=True)
    offloaded_W._offloaded_file_location = filename
    return offloaded_W


def patch_tokenizer(model, tokenizer):
    model.config.update({"unsloth_version": __version__})
    if not hasattr(tokenizer, "pad_token") or tokenizer.pad_token is None:
        # Fixes https://github.com/unslothai/unsloth/issues/5
        if hasattr(tokenizer, "unk_token") and tokenizer.unk_token is not None:
            tokenizer.add_special_tokens({"pad_token": tokenizer.unk_token})
            tokenizer.pad_token = tokenizer.unk_token
        else:
            name = model.config._name_or_path if model is not None else "Model"
            print(f"{name} does not have a padding token! Will use pad_token = [PAD].")
            tokenizer.add_special_tokens({"pad_token": "[PAD]"})
    return model, tokenizer


def clean_gpu_cache():
    for _ in range(3):
        gc.collect()
        torch.cuda.empty_cache()
