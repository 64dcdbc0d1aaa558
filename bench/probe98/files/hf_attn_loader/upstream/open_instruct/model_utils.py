"""Model / tokenizer loading shared by finetune.py, dpo_tune.py and the eval scripts.

Attention backend selection:
    --attn_implementation flash_attention_2   (default, needs flash-attn>=2.1 and an Ampere+ GPU)
    --attn_implementation sdpa                (PyTorch fused SDPA)
    --attn_implementation eager               (reference implementation, slow)
    --attn_implementation auto                (pick the best available)
"""
import argparse
import logging
import os
from typing import Optional, Tuple

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    BitsAndBytesConfig,
    PreTrainedModel,
    PreTrainedTokenizer,
)
from transformers.utils import is_flash_attn_2_available
from transformers.utils.import_utils import is_torch_sdpa_available

logger = logging.getLogger(__name__)

torch.backends.cuda.matmul.allow_tf32 = True


def add_model_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    group = parser.add_argument_group("model")
    group.add_argument("--model_name_or_path", type=str, required=True)
    group.add_argument("--tokenizer_name", type=str, default=None)
    group.add_argument(
        "--attn_implementation",
        type=str,
        default="flash_attention_2",
        choices=["eager", "sdpa", "flash_attention_2", "auto"],
        help="Which attention kernel HF transformers should use.",
    )
    group.add_argument("--torch_dtype", type=str, default="auto", choices=["auto", "bfloat16", "float16", "float32"])
    group.add_argument("--load_in_4bit", action="store_true", help="QLoRA: load the base model in 4-bit NF4")
    group.add_argument("--gradient_checkpointing", action="store_true")
    group.add_argument("--trust_remote_code", action="store_true")
    group.add_argument("--use_slow_tokenizer", action="store_true")
    return parser


def get_attn_implementation(requested: str) -> str:
    """'auto' -> flash_attention_2 if installed and the GPU is Ampere or newer, else sdpa, else eager."""
    if requested != "auto":
        return requested
    if is_flash_attn_2_available() and torch.cuda.is_available():
        major, _ = torch.cuda.get_device_capability()
        if major >= 8:
            return "flash_attention_2"
        logger.info("GPU compute capability %d.x < 8.0, flash-attn 2 unavailable", major)
    if is_torch_sdpa_available():
        return "sdpa"
    return "eager"


def get_torch_dtype(name: str) -> torch.dtype:
    if name == "auto":
        if torch.cuda.is_available() and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float16
    return getattr(torch, name)


def load_model_and_tokenizer(args) -> Tuple[PreTrainedModel, PreTrainedTokenizer]:
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    dtype = get_torch_dtype(args.torch_dtype)
    attn_impl = get_attn_implementation(args.attn_implementation)
    logger.info("Loading %s with attn_implementation=%s dtype=%s", args.model_name_or_path, attn_impl, dtype)

    quantization_config: Optional[BitsAndBytesConfig] = None
    device_map = None
    if args.load_in_4bit:
        quantization_config = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_use_double_quant=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_compute_dtype=dtype,
        )
        # each rank loads the (quantized) weights straight onto its own GPU
        device_map = {"": f"cuda:{local_rank}"}

    model = AutoModelForCausalLM.from_pretrained(
        args.model_name_or_path,
        torch_dtype=dtype,
        attn_implementation=attn_impl,
        quantization_config=quantization_config,
        device_map=device_map,
        trust_remote_code=args.trust_remote_code,
        use_cache=False if args.gradient_checkpointing else True,
    )
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})

    tokenizer = AutoTokenizer.from_pretrained(
        args.tokenizer_name or args.model_name_or_path,
        use_fast=not args.use_slow_tokenizer,
        trust_remote_code=args.trust_remote_code,
    )
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    # packing / padding-free collators rely on right padding with flash-attn varlen
    tokenizer.padding_side = "right"
    return model, tokenizer


@torch.no_grad()
def load_for_inference(path: str, device: str = "cuda") -> Tuple[PreTrainedModel, PreTrainedTokenizer]:
    """Used by eval/ scripts: one model per process, fp16, flash-attn 2."""
    model = AutoModelForCausalLM.from_pretrained(
        path,
        torch_dtype=torch.float16,
        attn_implementation="flash_attention_2",
        device_map="cuda",
    )
    model.eval()
    tokenizer = AutoTokenizer.from_pretrained(path, padding_side="left")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    logger.info("Loaded %s on %s (%.1f GB allocated)", path, device, torch.cuda.memory_allocated() / 2**30)
    return model, tokenizer


@torch.no_grad()
def generate_completions(model, tokenizer, prompts, batch_size=8, max_new_tokens=512, **gen_kwargs):
    outputs = []
    for i in range(0, len(prompts), batch_size):
        batch = tokenizer(prompts[i : i + batch_size], return_tensors="pt", padding=True).to(model.device)
        out = model.generate(**batch, max_new_tokens=max_new_tokens, do_sample=False, **gen_kwargs)
        out = out[:, batch["input_ids"].shape[1] :]
        outputs.extend(tokenizer.batch_decode(out, skip_special_tokens=True))
    return outputs
