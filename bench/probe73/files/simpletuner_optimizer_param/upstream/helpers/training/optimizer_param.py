import inspect
import logging
import os

import accelerate
import torch
from accelerate.logging import get_logger

from helpers.training.multi_process import should_log
from helpers.training.optimizers.adamw_bfloat16 import AdamWBF16
from helpers.training.optimizers.adamw_schedulefree import AdamWScheduleFreeKahan
from helpers.training.optimizers.soap import SOAP
from helpers.training.state_tracker import StateTracker

logger = get_logger(__name__, log_level=os.environ.get("SIMPLETUNER_LOG_LEVEL", "INFO"))
if not should_log():
    logger.setLevel("ERROR")

is_optimi_available = False
try:
    from optimi import AdamW as OptimiAdamW
    from optimi import Lion as OptimiLion
    from optimi import StableAdamW as OptimiStableAdamW
    from optimi import prepare_for_gradient_release

    is_optimi_available = True
except Exception:
    logger.error("Could not load optimi library. Please install `torch-optimi` for better memory efficiency.")

is_bitsandbytes_available = False
try:
    import bitsandbytes

    is_bitsandbytes_available = True
except Exception:
    if torch.cuda.is_available():
        logger.warning("Could not load bitsandbytes library. BnB-specific optimisers and other functionality will be unavailable.")

is_ao_available = False
try:
    from torchao.prototype.low_bit_optim import AdamW4bit as AOAdamW4Bit
    from torchao.prototype.low_bit_optim import AdamW8bit as AOAdamW8Bit
    from torchao.prototype.low_bit_optim import AdamWFp8 as AOAdamWFp8
    from torchao.prototype.low_bit_optim import CPUOffloadOptimizer as AOCPUOffloadOptimizer

    is_ao_available = True
except Exception:
    logger.debug("Could not load torchao low-bit optimisers.")

optimizer_choices = {
    "adamw_bf16": {
        "precision": "bf16",
        "default_settings": {"betas": (0.9, 0.999), "weight_decay": 1e-2, "eps": 1e-6},
        "class": AdamWBF16,
    },
    "adamw_schedulefree": {
        "precision": "any",
        "override_lr_scheduler": True,
        "can_warmup": True,
        "default_settings": {"betas": (0.9, 0.999), "weight_decay": 1e-2, "eps": 1e-8},
        "class": AdamWScheduleFreeKahan,
    },
    "adamw": {
        "precision": "any",
        "default_settings": {"betas": (0.9, 0.999), "weight_decay": 1e-2, "eps": 1e-6, "fused": True},
        "class": torch.optim.AdamW,
    },
    "soap": {
        "precision": "any",
        "default_settings": {"betas": (0.95, 0.95), "shampoo_beta": -1, "eps": 1e-8, "weight_decay": 0.01, "precondition_frequency": 10},
        "class": SOAP,
    },
}

if is_optimi_available:
    optimizer_choices.update(
        {
            "optimi-stableadamw": {
                "precision": "any",
                "default_settings": {"betas": (0.9, 0.99), "weight_decay": 0.0, "eps": 1e-6, "decouple_lr": False, "kahan_sum": True},
                "class": OptimiStableAdamW,
                "gradient_release": True,
            },
            "optimi-lion": {
                "precision": "any",
                "default_settings": {"betas": (0.9, 0.99), "weight_decay": 0.0, "decouple_lr": False, "kahan_sum": True},
                "class": OptimiLion,
                "gradient_release": True,
            },
        }
    )

if is_bitsandbytes_available:
    optimizer_choices.update(
        {
            "bnb-adamw8bit": {
                "precision": "any",
                "default_settings": {"betas": (0.9, 0.999), "weight_decay": 1e-2, "eps": 1e-6, "min_8bit_size": 4096, "percentile_clipping": 100, "block_wise": True},
                "class": bitsandbytes.optim.AdamW8bit,
            },
            "bnb-lion8bit": {
                "precision": "any",
                "default_settings": {"betas": (0.9, 0.99), "weight_decay": 0.0, "min_8bit_size": 4096, "percentile_clipping": 100, "block_wise": True},
                "class": bitsandbytes.optim.Lion8bit,
            },
            "bnb-ademamix8bit": {
                "precision": "any",
                "default_settings": {"betas": (0.9, 0.999, 0.9999), "alpha": 5.0, "t_alpha": None, "t_beta3": None, "weight_decay": 1e-2, "eps": 1e-8, "min_8bit_size": 4096},
                "class": bitsandbytes.optim.AdEMAMix8bit,
            },
            "bnb-paged-adamw8bit": {
                "precision": "any",
                "default_settings": {"betas": (0.9, 0.999), "weight_decay": 1e-2, "eps": 1e-6, "min_8bit_size": 4096},
                "class": bitsandbytes.optim.PagedAdamW8bit,
            },
        }
    )

if is_ao_available:
    optimizer_choices.update(
        {
            "ao-adamw8bit": {
                "precision": "bf16",
                "default_settings": {"betas": (0.9, 0.999), "weight_decay": 1e-2, "eps": 1e-6, "block_size": 256},
                "class": AOAdamW8Bit,
            },
            "ao-adamw4bit": {
                "precision": "bf16",
                "default_settings": {"betas": (0.9, 0.999), "weight_decay": 1e-2, "eps": 1e-6, "block_size": 128},
                "class": AOAdamW4Bit,
            },
            "ao-adamfp8": {
                "precision": "bf16",
                "default_settings": {"betas": (0.9, 0.999), "weight_decay": 1e-2, "eps": 1e-6, "block_size": 256},
                "class": AOAdamWFp8,
            },
            "ao-adamw8bit-cpuoffload": {
                "precision": "bf16",
                "default_settings": {"betas": (0.9, 0.999), "weight_decay": 1e-2, "offload_gradients": True, "optimizer_class": torch.optim.AdamW, "fused": True},
                "class": AOCPUOffloadOptimizer,
            },
        }
    )

args_to_optimizer_mapping = {
    "use_adafactor_optimizer": "adafactor",
    "use_prodigy_optimizer": "prodigy",
    "use_dadaptation_optimizer": "dadaptation",
    "adam_bfloat16": "adamw_bf16",
    "use_8bit_adam": "bnb-adamw8bit",
}

deprecated_optimizers = {
    "prodigy": "Prodigy optimiser has been removed due to issues with precision levels and convergence. Please use adamw_schedulefree instead.",
    "dadaptation": "D-adaptation optimiser has been removed due to issues with precision levels and convergence. Please use adamw_schedulefree instead.",
    "adafactor": "Adafactor optimiser has been removed in favour of optimi-stableadamw, which offers improved memory efficiency and convergence.",
}


def convert_arg_to_parameters(args):
    """return dict of kwargs from args"""
    out = {}
    for arg, optimizer in args_to_optimizer_mapping.items():
        if hasattr(args, arg) and getattr(args, arg):
            out[optimizer] = getattr(args, arg)
    return out


def optimizer_parameters(optimizer, args):
    """Return the parameters for the optimizer"""
    if optimizer in optimizer_choices:
        optimizer_details = optimizer_choices.get(optimizer)
        optimizer_class = optimizer_choices.get(optimizer).get("class")
        optimizer_params = optimizer_choices.get(optimizer).get("default_settings")
        optimizer_params["lr"] = args.learning_rate
        if args.optimizer_release_gradient and "optimi" in optimizer:
            optimizer_params["gradient_release"] = True
        optimizer_details["default_settings"] = optimizer_params
        if args.optimizer_config is not None and args.optimizer_config:
            for config_item in args.optimizer_config.split(","):
                key, value = config_item.split("=")
                optimizer_params[key] = type(optimizer_params.get(key, value))(value)
        return optimizer_class, optimizer_details
    else:
        raise ValueError(f"Optimizer {optimizer} not found.")


def is_optimizer_bf16(optimizer: str) -> bool:
    optimizer_precision = optimizer_choices.get(optimizer, {}).get("precision", "fp32")
    if optimizer_precision == "bf16":
        return True
    return False


def check_optimizer_precision(args):
    if is_optimizer_bf16(args.optimizer):
        if args.mixed_precision != "bf16" and not args.i_know_what_i_am_doing:
            raise ValueError(f"Optimizer {args.optimizer} requires bf16 weights. Set --mixed_precision=bf16.")
        if not torch.cuda.is_bf16_supported():
            raise ValueError(f"Optimizer {args.optimizer} requires bf16, which is not supported by this GPU.")


def is_lr_scheduler_disabled(optimizer: str):
    """Check if the optimizer has a built-in LR scheduler"""
    is_disabled = False
    if optimizer in optimizer_choices:
        is_disabled = optimizer_choices.get(optimizer).get("override_lr_scheduler", False)
    return is_disabled


def determine_optimizer_class_with_config(args, use_deepspeed_optimizer, is_quantized, enable_adamw_bf16) -> tuple:
    extra_optimizer_args = {}
    if use_deepspeed_optimizer:
        optimizer_class = accelerate.utils.DummyOptim
        extra_optimizer_args["lr"] = float(args.learning_rate)
        extra_optimizer_args["betas"] = (args.adam_beta1, args.adam_beta2)
        extra_optimizer_args["eps"] = args.adam_epsilon
        extra_optimizer_args["weight_decay"] = args.adam_weight_decay
        default_settings = extra_optimizer_args
        optimizer_details = {}
    elif is_quantized and not enable_adamw_bf16 and args.optimizer == "adamw_bf16":
        logger.error(f"When --base_model_default_dtype=fp32, AdamWBF16 may not be used. Switching to AdamW.")
        optimizer_class, optimizer_details = optimizer_parameters("adamw", args)
        default_settings = optimizer_details.get("default_settings")
    else:
        check_optimizer_precision(args)
        if args.optimizer in deprecated_optimizers:
            raise ValueError(deprecated_optimizers[args.optimizer])
        optimizer_class, optimizer_details = optimizer_parameters(args.optimizer, args)
        default_settings = optimizer_details.get("default_settings")
    logger.info(f"cls: {optimizer_class}, settings: {default_settings}")
    return default_settings, optimizer_class
