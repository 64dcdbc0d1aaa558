"""Build a (Q)LoRA / DoRA model for supervised fine-tuning.

    model, tokenizer = load_peft_model(args)

Supports full bf16 LoRA, 4-bit NF4 QLoRA (bitsandbytes) and DoRA. Designed for single-node
multi-GPU runs under torchrun / accelerate (one replica per GPU).
"""
import logging
import os
from dataclasses import dataclass, field
from typing import List, Optional

import bitsandbytes as bnb
import torch
from peft import LoraConfig, TaskType, get_peft_model, prepare_model_for_kbit_training
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

logger = logging.getLogger(__name__)


@dataclass
class PeftArgs:
    model_name_or_path: str = "meta-llama/Llama-2-7b-hf"
    quantization: Optional[str] = "nf4"  # None | "nf4" | "int8"
    lora_r: int = 64
    lora_alpha: int = 16
    lora_dropout: float = 0.05
    use_dora: bool = False
    use_rslora: bool = False
    target_modules: Optional[List[str]] = field(default=None)
    gradient_checkpointing: bool = True
    attn_implementation: str = "flash_attention_2"
    trust_remote_code: bool = False


def compute_dtype() -> torch.dtype:
    # bf16 needs Ampere (sm80) or newer; V100/T4 fall back to fp16
    major, _ = torch.cuda.get_device_capability()
    return torch.bfloat16 if major >= 8 else torch.float16


def find_all_linear_names(model, quantization: Optional[str]) -> List[str]:
    if quantization == "nf4":
        cls = bnb.nn.Linear4bit
    elif quantization == "int8":
        cls = bnb.nn.Linear8bitLt
    else:
        cls = torch.nn.Linear
    names = set()
    for name, module in model.named_modules():
        if isinstance(module, cls):
            names.add(name.split(".")[-1])
    names.discard("lm_head")  # needed for 16-bit
    return sorted(names)


def build_quant_config(args: PeftArgs, dtype: torch.dtype) -> Optional[BitsAndBytesConfig]:
    if args.quantization == "nf4":
        return BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=dtype,
            bnb_4bit_quant_storage=dtype,
        )
    if args.quantization == "int8":
        return BitsAndBytesConfig(load_in_8bit=True, llm_int8_threshold=6.0)
    return None


def load_peft_model(args: PeftArgs):
    dtype = compute_dtype()
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    quant_config = build_quant_config(args, dtype)

    model = AutoModelForCausalLM.from_pretrained(
        args.model_name_or_path,
        quantization_config=quant_config,
        torch_dtype=dtype,
        attn_implementation=args.attn_implementation,
        device_map={"": torch.cuda.current_device()} if quant_config is not None else None,
        trust_remote_code=args.trust_remote_code,
    )
    if quant_config is None:
        model = model.to(f"cuda:{local_rank}")

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path, trust_remote_code=args.trust_remote_code)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.unk_token or tokenizer.eos_token

    if quant_config is not None:
        model = prepare_model_for_kbit_training(
            model,
            use_gradient_checkpointing=args.gradient_checkpointing,
            gradient_checkpointing_kwargs={"use_reentrant": False},
        )
    elif args.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()

    target_modules = args.target_modules or find_all_linear_names(model, args.quantization)
    lora_config = LoraConfig(
        r=args.lora_r,
        lora_alpha=args.lora_alpha,
        lora_dropout=args.lora_dropout,
        target_modules=target_modules,
        use_dora=args.use_dora,
        use_rslora=args.use_rslora,
        bias="none",
        task_type=TaskType.CAUSAL_LM,
    )
    model = get_peft_model(model, lora_config)

    # keep LoRA weights in fp32 for stability, norms in fp32, everything else in compute dtype
    for name, module in model.named_modules():
        if "lora_" in name:
            module.to(torch.float32)
        elif "norm" in name:
            module.to(torch.float32)

    if int(os.environ.get("RANK", 0)) == 0:
        model.print_trainable_parameters()
        logger.info("GPU: %s, compute dtype %s, free memory %.1f GiB", torch.cuda.get_device_name(),
                    dtype, torch.cuda.mem_get_info()[0] / 2**30)
    return model, tokenizer
