"""QLoRA instruction tuning of a 4-bit base model (guanaco / alpaca style data) with peft + Trainer.

    python examples/qlora/finetune_qlora.py --model meta-llama/Llama-2-7b-hf --dataset timdettmers/openassistant-guanaco
"""
import argparse
import os
from dataclasses import dataclass
from typing import Dict, Sequence

import torch
import transformers
from datasets import load_dataset
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from peft.tuners.lora import LoraLayer
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    BitsAndBytesConfig,
    Trainer,
    TrainingArguments,
    set_seed,
)

IGNORE_INDEX = -100
DEFAULT_PAD_TOKEN = "[PAD]"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="meta-llama/Llama-2-7b-hf")
    p.add_argument("--dataset", default="timdettmers/openassistant-guanaco")
    p.add_argument("--output_dir", default="./qlora-out")
    p.add_argument("--lora_r", type=int, default=64)
    p.add_argument("--lora_alpha", type=int, default=16)
    p.add_argument("--lora_dropout", type=float, default=0.05)
    p.add_argument("--max_len", type=int, default=1024)
    p.add_argument("--batch_size", type=int, default=4)
    p.add_argument("--grad_accum", type=int, default=4)
    p.add_argument("--lr", type=float, default=2e-4)
    p.add_argument("--max_steps", type=int, default=1875)
    p.add_argument("--double_quant", action="store_true", default=True)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def find_all_linear_names(model):
    import bitsandbytes as bnb

    lora_module_names = set()
    for name, module in model.named_modules():
        if isinstance(module, bnb.nn.Linear4bit):
            names = name.split(".")
            lora_module_names.add(names[0] if len(names) == 1 else names[-1])
    lora_module_names.discard("lm_head")
    return list(lora_module_names)


def smart_tokenizer_and_embedding_resize(special_tokens_dict, tokenizer, model):
    num_new_tokens = tokenizer.add_special_tokens(special_tokens_dict)
    model.resize_token_embeddings(len(tokenizer))
    if num_new_tokens > 0:
        input_embeddings = model.get_input_embeddings().weight.data
        output_embeddings = model.get_output_embeddings().weight.data
        input_embeddings[-num_new_tokens:] = input_embeddings[:-num_new_tokens].mean(dim=0, keepdim=True)
        output_embeddings[-num_new_tokens:] = output_embeddings[:-num_new_tokens].mean(dim=0, keepdim=True)


@dataclass
class DataCollatorForCausalLM:
    tokenizer: transformers.PreTrainedTokenizer
    max_len: int

    def __call__(self, instances: Sequence[Dict]) -> Dict[str, torch.Tensor]:
        sources = [f"{self.tokenizer.bos_token}{ex['input']}" for ex in instances]
        targets = [f"{ex['output']}{self.tokenizer.eos_token}" for ex in instances]
        src = self.tokenizer(sources, max_length=self.max_len, truncation=True, add_special_tokens=False)
        tgt = self.tokenizer(targets, max_length=self.max_len, truncation=True, add_special_tokens=False)
        input_ids, labels = [], []
        for s, t in zip(src["input_ids"], tgt["input_ids"]):
            input_ids.append(torch.tensor(s + t))
            labels.append(torch.tensor([IGNORE_INDEX] * len(s) + t))
        input_ids = torch.nn.utils.rnn.pad_sequence(input_ids, batch_first=True,
                                                    padding_value=self.tokenizer.pad_token_id)
        labels = torch.nn.utils.rnn.pad_sequence(labels, batch_first=True, padding_value=IGNORE_INDEX)
        return {"input_ids": input_ids, "labels": labels,
                "attention_mask": input_ids.ne(self.tokenizer.pad_token_id)}


def split_guanaco(example):
    text = example["text"]
    head, _, tail = text.rpartition("### Assistant:")
    return {"input": head + "### Assistant:", "output": tail}


def main():
    args = parse_args()
    set_seed(args.seed)
    compute_dtype = torch.bfloat16 if torch.cuda.get_device_capability()[0] >= 8 else torch.float16

    quant_config = BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_compute_dtype=compute_dtype,
        bnb_4bit_use_double_quant=args.double_quant,
        bnb_4bit_quant_type="nf4",
    )
    model = AutoModelForCausalLM.from_pretrained(
        args.model,
        quantization_config=quant_config,
        device_map={"": torch.cuda.current_device()},
        torch_dtype=compute_dtype,
        attn_implementation="flash_attention_2",
    )
    model.config.torch_dtype = compute_dtype
    model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True)

    tokenizer = AutoTokenizer.from_pretrained(args.model, padding_side="right", use_fast=False)
    if tokenizer._pad_token is None:
        smart_tokenizer_and_embedding_resize({"pad_token": DEFAULT_PAD_TOKEN}, tokenizer, model)

    lora_config = LoraConfig(
        r=args.lora_r, lora_alpha=args.lora_alpha, lora_dropout=args.lora_dropout,
        target_modules=find_all_linear_names(model), bias="none", task_type="CAUSAL_LM",
    )
    model = get_peft_model(model, lora_config)
    for name, module in model.named_modules():
        if isinstance(module, LoraLayer) and compute_dtype == torch.bfloat16:
            module = module.to(torch.bfloat16)
        if "norm" in name:
            module = module.to(torch.float32)
        if ("lm_head" in name or "embed_tokens" in name) and hasattr(module, "weight"):
            if compute_dtype == torch.bfloat16 and module.weight.dtype == torch.float32:
                module = module.to(torch.bfloat16)
    model.print_trainable_parameters()

    dataset = load_dataset(args.dataset)
    dataset = dataset.map(split_guanaco, remove_columns=["text"])

    training_args = TrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.batch_size,
        gradient_accumulation_steps=args.grad_accum,
        learning_rate=args.lr,
        max_steps=args.max_steps,
        lr_scheduler_type="constant",
        warmup_ratio=0.03,
        max_grad_norm=0.3,
        optim="paged_adamw_32bit",
        bf16=compute_dtype == torch.bfloat16,
        fp16=compute_dtype == torch.float16,
        gradient_checkpointing=True,
        group_by_length=True,
        logging_steps=10,
        save_strategy="steps",
        save_steps=250,
        save_total_limit=40,
        remove_unused_columns=False,
        report_to="wandb",
    )
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=dataset["train"],
        eval_dataset=dataset["test"],
        data_collator=DataCollatorForCausalLM(tokenizer=tokenizer, max_len=args.max_len),
    )
    model.config.use_cache = False
    trainer.train()
    trainer.save_state()
    model.save_pretrained(os.path.join(args.output_dir, "adapter_model"))


if __name__ == "__main__":
    main()
