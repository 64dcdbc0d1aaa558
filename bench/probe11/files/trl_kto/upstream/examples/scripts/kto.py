# Copyright 2024 The HuggingFace Inc. team. All rights reserved.
"""
Run the KTO training script with the commands below.

# Full training:
accelerate launch --config_file examples/accelerate_configs/deepspeed_zero3.yaml examples/scripts/kto.py \
    --model_name_or_path=trl-lib/qwen1.5-1.8b-sft \
    --per_device_train_batch_size 16 \
    --num_train_epochs 1 \
    --learning_rate 5e-7 \
    --output_dir=kto-aligned-model \
    --bf16

# QLoRA:
python examples/scripts/kto.py --model_name_or_path=trl-lib/qwen1.5-1.8b-sft --use_peft --load_in_4bit
"""
import os
from dataclasses import dataclass, field
from typing import Optional

import torch
from accelerate import PartialState
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, HfArgumentParser

from trl import KTOConfig, KTOTrainer, ModelConfig, get_peft_config, setup_chat_format


@dataclass
class ScriptArguments:
    dataset_name: str = field(default="trl-lib/kto-mix-14k")
    dataset_train_split: str = field(default="train")
    dataset_test_split: str = field(default="test")
    max_eval_samples: Optional[int] = field(default=None)
    dataset_num_proc: int = field(default=8)


def get_quantization_config(model_args: ModelConfig):
    if model_args.load_in_4bit:
        return BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_compute_dtype=torch.bfloat16,
            bnb_4bit_quant_type=model_args.bnb_4bit_quant_type,
            bnb_4bit_use_double_quant=model_args.use_bnb_nested_quant,
        )
    elif model_args.load_in_8bit:
        return BitsAndBytesConfig(load_in_8bit=True)
    return None


def get_device_map():
    # one full copy of the model per process; ZeRO-3 handles the sharding
    if torch.cuda.is_available():
        return {"": PartialState().local_process_index}
    return None


def apply_chat_template(example, tokenizer):
    example["prompt"] = tokenizer.apply_chat_template(example["prompt"], tokenize=False)
    example["completion"] = tokenizer.apply_chat_template(example["completion"], tokenize=False)
    return example


def main():
    parser = HfArgumentParser((ScriptArguments, KTOConfig, ModelConfig))
    script_args, training_args, model_args = parser.parse_args_into_dataclasses()

    if model_args.attn_implementation is None:
        model_args.attn_implementation = "flash_attention_2"

    torch_dtype = (
        model_args.torch_dtype
        if model_args.torch_dtype in ["auto", None]
        else getattr(torch, model_args.torch_dtype)
    )
    quantization_config = get_quantization_config(model_args)
    model_kwargs = dict(
        revision=model_args.model_revision,
        trust_remote_code=model_args.trust_remote_code,
        attn_implementation=model_args.attn_implementation,
        torch_dtype=torch_dtype,
        use_cache=False if training_args.gradient_checkpointing else True,
        device_map=get_device_map() if quantization_config is not None else None,
        quantization_config=quantization_config,
    )

    model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **model_kwargs)
    peft_config = get_peft_config(model_args)
    ref_model = None
    if peft_config is None:
        ref_model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path, **model_kwargs)

    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path, trust_remote_code=True)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if tokenizer.chat_template is None:
        model, tokenizer = setup_chat_format(model, tokenizer)

    dataset = load_dataset(script_args.dataset_name)
    with PartialState().local_main_process_first():
        dataset = dataset.map(apply_chat_template, fn_kwargs={"tokenizer": tokenizer},
                              num_proc=script_args.dataset_num_proc)

    eval_dataset = dataset[script_args.dataset_test_split]
    if script_args.max_eval_samples is not None:
        eval_dataset = eval_dataset.select(range(script_args.max_eval_samples))

    if training_args.gradient_checkpointing:
        training_args.gradient_checkpointing_kwargs = {"use_reentrant": False}
    training_args.optim = "adamw_torch_fused"
    training_args.tf32 = torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 8

    trainer = KTOTrainer(
        model,
        ref_model,
        args=training_args,
        train_dataset=dataset[script_args.dataset_train_split],
        eval_dataset=eval_dataset,
        processing_class=tokenizer,
        peft_config=peft_config,
    )

    trainer.train()
    metrics = trainer.evaluate()
    trainer.log_metrics("eval", metrics)
    trainer.save_metrics("eval", metrics)

    trainer.save_model(training_args.output_dir)
    if training_args.push_to_hub:
        trainer.push_to_hub(dataset_name=script_args.dataset_name)

    if PartialState().is_main_process:
        peak = torch.cuda.max_memory_allocated() / 1024 ** 3
        print(f"[rank0] peak memory during KTO: {peak:.1f} GiB")
        with open(os.path.join(training_args.output_dir, "kto_summary.txt"), "w") as f:
            f.write(f"model={model_args.model_name_or_path}\n")
            f.write(f"beta={training_args.beta} desirable_weight={training_args.desirable_weight}\n")
            f.write(f"undesirable_weight={training_args.undesirable_weight}\n")
            f.write(f"eval={metrics}\n")


if __name__ == "__main__":
    main()
