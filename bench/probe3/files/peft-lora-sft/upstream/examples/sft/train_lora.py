#!/usr/bin/env python
# Supervised fine-tuning of a causal LM with LoRA adapters (peft + transformers Trainer).
#
#   torchrun --nproc_per_node 8 examples/sft/train_lora.py --model_name_or_path Qwen/Qwen2-7B \
#       --dataset_name tatsu-lab/alpaca --output_dir out/qwen2-lora --use_flash_attn
import logging
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Optional

import datasets
import torch
import transformers
from peft import LoraConfig, PeftModel, get_peft_model, prepare_model_for_kbit_training
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    HfArgumentParser,
    Trainer,
    TrainingArguments,
    set_seed,
)

logger = logging.getLogger(__name__)

PROMPT = (
    "Below is an instruction that describes a task. Write a response that appropriately completes the request.\n\n"
    "### Instruction:\n{instruction}\n\n### Response:\n"
)


@dataclass
class ScriptArguments:
    model_name_or_path: str = field(default="Qwen/Qwen2-7B")
    dataset_name: str = field(default="tatsu-lab/alpaca")
    max_seq_length: int = field(default=2048)
    use_flash_attn: bool = field(default=False, metadata={"help": "Use FlashAttention-2 kernels."})
    lora_r: int = field(default=64)
    lora_alpha: int = field(default=16)
    lora_dropout: float = field(default=0.05)
    target_modules: str = field(default="q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj")
    merge_after_training: bool = field(default=False)
    log_gpu_memory: bool = field(default=True)


def print_gpu_utilization():
    # NVML gives the real device usage including the CUDA context, unlike memory_allocated()
    from pynvml import nvmlDeviceGetHandleByIndex, nvmlDeviceGetMemoryInfo, nvmlInit

    nvmlInit()
    handle = nvmlDeviceGetHandleByIndex(int(os.environ.get("LOCAL_RANK", 0)))
    info = nvmlDeviceGetMemoryInfo(handle)
    logger.info(f"GPU memory occupied: {info.used // 1024 ** 2} MB.")


def build_dataset(tokenizer, name, max_len):
    raw = datasets.load_dataset(name, split="train")

    def tokenize(example):
        prompt = PROMPT.format(instruction=example["instruction"] + ("\n" + example["input"] if example["input"] else ""))
        full = prompt + example["output"] + tokenizer.eos_token
        ids = tokenizer(full, truncation=True, max_length=max_len)["input_ids"]
        n_prompt = len(tokenizer(prompt, truncation=True, max_length=max_len)["input_ids"])
        labels = [-100] * n_prompt + ids[n_prompt:]
        return {"input_ids": ids, "attention_mask": [1] * len(ids), "labels": labels[: len(ids)]}

    return raw.map(tokenize, remove_columns=raw.column_names, num_proc=8)


def main():
    parser = HfArgumentParser((ScriptArguments, TrainingArguments))
    script_args, training_args = parser.parse_args_into_dataclasses()

    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        handlers=[logging.StreamHandler(sys.stdout)],
        level=logging.INFO if training_args.local_rank in (-1, 0) else logging.WARN,
    )
    transformers.utils.logging.set_verbosity_info()
    set_seed(training_args.seed)

    # bf16 only on Ampere+; older cards fall back to fp16 with loss scaling
    if torch.cuda.get_device_capability()[0] >= 8:
        compute_dtype = torch.bfloat16
        training_args.bf16, training_args.fp16 = True, False
    else:
        compute_dtype = torch.float16
        training_args.bf16, training_args.fp16 = False, True
    training_args.tf32 = True
    training_args.optim = "adamw_torch_fused"
    training_args.ddp_find_unused_parameters = False
    training_args.dataloader_pin_memory = True

    tokenizer = AutoTokenizer.from_pretrained(script_args.model_name_or_path, trust_remote_code=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "right"

    model = AutoModelForCausalLM.from_pretrained(
        script_args.model_name_or_path,
        torch_dtype=compute_dtype,
        attn_implementation="flash_attention_2" if script_args.use_flash_attn else "sdpa",
        device_map={"": torch.cuda.current_device()},
        trust_remote_code=True,
    )
    model.config.use_cache = False
    if training_args.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()

    peft_config = LoraConfig(
        r=script_args.lora_r,
        lora_alpha=script_args.lora_alpha,
        lora_dropout=script_args.lora_dropout,
        target_modules=script_args.target_modules.split(","),
        bias="none",
        task_type="CAUSAL_LM",
    )
    model = get_peft_model(model, peft_config)
    if training_args.local_rank in (-1, 0):
        model.print_trainable_parameters()

    # keep LoRA weights in fp32 for a stable optimiser state
    for name, param in model.named_parameters():
        if param.requires_grad:
            param.data = param.data.float()

    train_dataset = build_dataset(tokenizer, script_args.dataset_name, script_args.max_seq_length)
    collator = DataCollatorForSeq2Seq(tokenizer, pad_to_multiple_of=8, return_tensors="pt", padding=True)

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        data_collator=collator,
        tokenizer=tokenizer,
    )
    if script_args.log_gpu_memory and training_args.local_rank in (-1, 0):
        print_gpu_utilization()

    train_result = trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    metrics = train_result.metrics
    metrics["peak_mem_gb"] = torch.cuda.max_memory_allocated() / 2 ** 30
    metrics["train_ppl"] = math.exp(min(metrics.get("train_loss", 20.0), 20.0))
    trainer.log_metrics("train", metrics)
    trainer.save_metrics("train", metrics)
    trainer.save_state()
    trainer.model.save_pretrained(training_args.output_dir)
    tokenizer.save_pretrained(training_args.output_dir)

    if script_args.merge_after_training and trainer.is_world_process_zero():
        del model, trainer
        torch.cuda.empty_cache()
        # merge on the host to avoid a second full copy on the accelerator
        base = AutoModelForCausalLM.from_pretrained(
            script_args.model_name_or_path, torch_dtype=compute_dtype, device_map="cpu", trust_remote_code=True
        )
        merged = PeftModel.from_pretrained(base, training_args.output_dir).merge_and_unload()
        merged.save_pretrained(os.path.join(training_args.output_dir, "merged"), safe_serialization=True)


if __name__ == "__main__":
    main()
