"""QLoRA: 4-bit NF4 base model + LoRA adapters, trained with the HF Trainer."""
import os
from dataclasses import dataclass, field
from typing import Optional

import torch
import transformers
from transformers import (AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig,
                          HfArgumentParser, Seq2SeqTrainer, Seq2SeqTrainingArguments, set_seed)
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from peft.tuners.lora import LoraLayer
import bitsandbytes as bnb
from datasets import load_dataset

IGNORE_INDEX = -100


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="huggyllama/llama-7b")
    trust_remote_code: bool = field(default=False)


@dataclass
class QuantArguments:
    bits: int = field(default=4, metadata={"help": "How many bits to use (4 or 8)."})
    double_quant: bool = field(default=True)
    quant_type: str = field(default="nf4", metadata={"help": "fp4 or nf4"})
    lora_r: int = field(default=64)
    lora_alpha: float = field(default=16)
    lora_dropout: float = field(default=0.05)
    max_memory_MB: int = field(default=80000)


@dataclass
class TrainingArguments(Seq2SeqTrainingArguments):
    optim: str = field(default="paged_adamw_32bit")
    gradient_checkpointing: bool = field(default=True)
    source_max_len: int = field(default=1024)
    target_max_len: int = field(default=256)
    dataset: Optional[str] = field(default="tatsu-lab/alpaca")


def find_all_linear_names(bits, model):
    cls = bnb.nn.Linear4bit if bits == 4 else (bnb.nn.Linear8bitLt if bits == 8 else torch.nn.Linear)
    names = set()
    for name, module in model.named_modules():
        if isinstance(module, cls):
            parts = name.split(".")
            names.add(parts[0] if len(parts) == 1 else parts[-1])
    names.discard("lm_head")
    return list(names)


def get_accelerate_model(margs, qargs, targs):
    n_gpus = torch.cuda.device_count()
    max_memory = {i: f"{qargs.max_memory_MB}MB" for i in range(n_gpus)}
    device_map = "auto"
    if os.environ.get("LOCAL_RANK") is not None:
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        device_map = {"": local_rank}
        max_memory = {"": max_memory[local_rank]}

    compute_dtype = torch.bfloat16 if targs.bf16 else (torch.float16 if targs.fp16 else torch.float32)
    model = AutoModelForCausalLM.from_pretrained(
        margs.model_name_or_path,
        device_map=device_map,
        max_memory=max_memory,
        quantization_config=BitsAndBytesConfig(
            load_in_4bit=qargs.bits == 4,
            load_in_8bit=qargs.bits == 8,
            llm_int8_threshold=6.0,
            bnb_4bit_compute_dtype=compute_dtype,
            bnb_4bit_use_double_quant=qargs.double_quant,
            bnb_4bit_quant_type=qargs.quant_type,
        ),
        torch_dtype=compute_dtype,
        trust_remote_code=margs.trust_remote_code,
    )
    if compute_dtype == torch.float16 and qargs.bits == 4:
        if torch.cuda.is_bf16_supported():
            print("=" * 80)
            print("Your GPU supports bfloat16, you can accelerate training with --bf16")
            print("=" * 80)

    model.config.torch_dtype = compute_dtype
    model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=targs.gradient_checkpointing)
    config = LoraConfig(r=qargs.lora_r, lora_alpha=qargs.lora_alpha,
                        target_modules=find_all_linear_names(qargs.bits, model),
                        lora_dropout=qargs.lora_dropout, bias="none", task_type="CAUSAL_LM")
    model = get_peft_model(model, config)
    for name, module in model.named_modules():
        if isinstance(module, LoraLayer) and targs.bf16:
            module.to(torch.bfloat16)
        if "norm" in name:
            module.to(torch.float32)
    return model


def format_alpaca(example):
    if example.get("input"):
        prompt = f"### Instruction:\n{example['instruction']}\n\n### Input:\n{example['input']}\n\n### Response:\n"
    else:
        prompt = f"### Instruction:\n{example['instruction']}\n\n### Response:\n"
    return {"input": prompt, "output": example["output"]}


def train():
    parser = HfArgumentParser((ModelArguments, QuantArguments, TrainingArguments))
    margs, qargs, targs = parser.parse_args_into_dataclasses()
    set_seed(targs.seed)
    model = get_accelerate_model(margs, qargs, targs)
    model.config.use_cache = False
    tok = AutoTokenizer.from_pretrained(margs.model_name_or_path, padding_side="right", use_fast=False)
    if tok.pad_token is None:
        tok.pad_token = tok.unk_token

    ds = load_dataset(targs.dataset)["train"].map(format_alpaca)

    def collate(batch):
        srcs = [f"{tok.bos_token}{b['input']}" for b in batch]
        tgts = [f"{b['output']}{tok.eos_token}" for b in batch]
        s = tok(srcs, max_length=targs.source_max_len, truncation=True, add_special_tokens=False)
        t = tok(tgts, max_length=targs.target_max_len, truncation=True, add_special_tokens=False)
        ids, labels = [], []
        for a, b in zip(s["input_ids"], t["input_ids"]):
            ids.append(torch.tensor(a + b))
            labels.append(torch.tensor([IGNORE_INDEX] * len(a) + b))
        ids = torch.nn.utils.rnn.pad_sequence(ids, batch_first=True, padding_value=tok.pad_token_id)
        labels = torch.nn.utils.rnn.pad_sequence(labels, batch_first=True, padding_value=IGNORE_INDEX)
        return {"input_ids": ids, "labels": labels, "attention_mask": ids.ne(tok.pad_token_id)}

    trainer = Seq2SeqTrainer(model=model, tokenizer=tok, args=targs, train_dataset=ds,
                             data_collator=collate)
    trainer.train()
    trainer.save_state()


if __name__ == "__main__":
    train()
