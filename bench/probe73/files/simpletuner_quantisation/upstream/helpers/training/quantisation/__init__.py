import logging
import os

import torch

from helpers.training.multi_process import should_log

logger = logging.getLogger(__name__)
if should_log():
    logger.setLevel(os.environ.get("SIMPLETUNER_LOG_LEVEL", "INFO"))
else:
    logger.setLevel("ERROR")

QUANTO_PRECISION_LEVELS = ["int2-quanto", "int4-quanto", "int8-quanto", "fp8-quanto", "fp8uz-quanto"]
TORCHAO_PRECISION_LEVELS = ["int4-torchao", "int8-torchao", "fp8-torchao"]
BNB_PRECISION_LEVELS = ["nf4-bnb", "int8-bnb"]
PRECISION_LEVELS = ["no_change"] + QUANTO_PRECISION_LEVELS + TORCHAO_PRECISION_LEVELS + BNB_PRECISION_LEVELS


def _fp8_capable_gpu() -> bool:
    if not torch.cuda.is_available():
        return False
    # fp8 matmul kernels need Ada (sm89) or Hopper (sm90)
    return torch.cuda.get_device_capability() >= (8, 9)


def _quanto_type_map(model_precision: str):
    if model_precision == "no_change":
        return None
    from optimum.quanto import qfloat8, qfloat8_e4m3fnuz, qint2, qint4, qint8

    if model_precision == "int2-quanto":
        quant_level = qint2
    elif model_precision == "int4-quanto":
        quant_level = qint4
    elif model_precision == "int8-quanto":
        quant_level = qint8
    elif model_precision == "fp8-quanto" or model_precision == "fp8uz-quanto":
        if torch.backends.mps.is_available():
            logger.warning("MPS doesn't support dtype float8, you must select another precision level such as bf16, int2, int8, or int8.")
            return None
        quant_level = qfloat8 if model_precision == "fp8-quanto" else qfloat8_e4m3fnuz
    else:
        raise ValueError(f"Invalid quantisation level: {model_precision}")
    return quant_level


def _quanto_model(model, model_precision, base_model_precision=None, quantize_activations: bool = False):
    try:
        from optimum.quanto import QTensor, freeze, quantize
        from helpers.training.quantisation import quanto_workarounds  # noqa: F401
    except ImportError as e:
        raise ImportError(f"To use Quanto, please install the optimum library: `pip install optimum-quanto`: {e}")

    if model is None:
        return model
    if model_precision is None:
        model_precision = base_model_precision
    if model_precision == "no_change" or model_precision is None:
        logger.info(f"...No quantisation applied to {model.__class__.__name__}.")
        return model

    logger.info(f"Quantising {model.__class__.__name__}. Using {model_precision}.")
    weight_quant = _quanto_type_map(model_precision)
    extra_quanto_args = {}
    if quantize_activations:
        logger.info("Freezing model weights and activations")
        extra_quanto_args["activations"] = weight_quant
        extra_quanto_args["exclude"] = ["*.norm", "*.norm1", "*.norm2", "*.norm2_context", "proj_out"]
    else:
        logger.info("Freezing model weights only")

    try:
        quantize(model, weights=weight_quant, **extra_quanto_args)
        freeze(model)
    except Exception as e:
        if "out of memory" in str(e).lower():
            logger.error("GPU ran out of memory during quantisation. Use --quantize_via=cpu to use the slower CPU method.")
        raise e

    return model


def _torchao_filter_fn(mod: torch.nn.Module, fqn: str):
    # don't convert the output module
    if fqn == "proj_out":
        return False
    # don't convert linear modules with weight dimensions not divisible by 16
    if isinstance(mod, torch.nn.Linear):
        if mod.in_features % 16 != 0 or mod.out_features % 16 != 0:
            return False
    return True


def _torchao_model(model, model_precision, base_model_precision=None, quantize_activations: bool = False):
    if model_precision is None:
        model_precision = base_model_precision
    if model is None or model_precision == "no_change" or model_precision is None:
        logger.info(f"...No quantisation applied to {model.__class__.__name__}.")
        return model

    try:
        import torchao  # noqa: F401
        from torchao.float8 import Float8LinearConfig, convert_to_float8_training
        from torchao.prototype.quantized_training import int8_weight_only_quantized_training
        from torchao.quantization import quantize_
    except ImportError as e:
        raise ImportError(f"To use torchao, please install the torchao library: `pip install torchao`: {e}")

    logger.info(f"Quantising {model.__class__.__name__}. Using {model_precision}.")
    if quantize_activations:
        logger.warning("Activation quantisation is not used in TorchAO. This will be ignored.")

    if model_precision == "int8-torchao":
        quantize_(model, int8_weight_only_quantized_training())
    elif model_precision == "fp8-torchao":
        if not _fp8_capable_gpu():
            raise ValueError("fp8-torchao requires an Ada (sm89) or Hopper (sm90) GPU.")
        model = convert_to_float8_training(
            model,
            module_filter_fn=_torchao_filter_fn,
            config=Float8LinearConfig(pad_inner_dim=True, enable_fsdp_float8_all_gather=False),
        )
    else:
        raise ValueError(f"Invalid quantisation level. model_precision={model_precision}, type={type(model_precision)}")

    return model


def get_quant_fn(base_model_precision):
    """
    Determine the quantization function based on the base model precision.
    """
    if base_model_precision is None or base_model_precision == "no_change":
        return None
    if "quanto" in base_model_precision:
        return _quanto_model
    if "torchao" in base_model_precision:
        return _torchao_model
    if "bnb" in base_model_precision:
        # bitsandbytes models are quantised at load time through diffusers' BitsAndBytesConfig
        return None
    return None


def get_bnb_config(base_model_precision: str, compute_dtype=torch.bfloat16):
    from diffusers import BitsAndBytesConfig

    if base_model_precision == "nf4-bnb":
        return BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=compute_dtype,
        )
    if base_model_precision == "int8-bnb":
        return BitsAndBytesConfig(load_in_8bit=True, llm_int8_skip_modules=["proj_out"])
    raise ValueError(f"Unknown bitsandbytes precision: {base_model_precision}")


def quantise_model(model=None, text_encoders: list = None, controlnet=None, ema=None, args=None, return_dict: bool = False):
    """
    Quantizes the provided models using the specified precision settings.
    """
    quant_fn = get_quant_fn(args.base_model_precision)
    if quant_fn is None:
        return (model, text_encoders, controlnet, ema)

    if args.quantize_via == "accelerator" and not torch.cuda.is_available():
        logger.warning("--quantize_via=accelerator requested but CUDA is not available; quantising on the CPU instead.")
        args.quantize_via = "cpu"

    if model is not None:
        model = quant_fn(model, args.base_model_precision, quantize_activations=args.quantize_activations)
        torch.cuda.empty_cache()

    if text_encoders is not None:
        quantized_text_encoders = []
        for i, te in enumerate(text_encoders):
            precision = getattr(args, f"text_encoder_{i + 1}_precision", "no_change")
            quantized_text_encoders.append(quant_fn(te, precision, base_model_precision=args.base_model_precision))
        text_encoders = quantized_text_encoders

    if ema is not None:
        ema.model = quant_fn(ema.model, args.base_model_precision, quantize_activations=args.quantize_activations)

    if controlnet is not None:
        controlnet = quant_fn(controlnet, args.base_model_precision, quantize_activations=args.quantize_activations)

    if return_dict:
        return {"model": model, "text_encoders": text_encoders, "controlnet": controlnet, "ema": ema}
    return (model, text_encoders, controlnet, ema)
