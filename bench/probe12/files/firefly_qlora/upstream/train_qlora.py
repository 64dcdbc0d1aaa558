# Firefly / BELLE style QLoRA trainer: 4-bit NF4 base model + LoRA on all linear layers.
import argparse
import json
import os
from os.path import join

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "max_split_size_mb:128"

import bitsandbytes as bnb
import torch
import torch.nn as nn
from loguru import logger
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    BitsAndBytesConfig,
    HfArgumentParser,
    TrainingArguments,
    set_seed,
)

from component.argument import QLoRAArguments
from component.collator import SFTDataCollator
from component.dataset import ChatGLM2SFTDataset, SFTDataset
from component.loss import TargetLMLoss
from component.trainer import LoRATrainer


def verify_model_dtype(model):
    """Print the dtype distribution of the parameters (for debugging 4-bit loading)."""
    dtype2param_num, dtype2param_name = {}, {}
    for name, p in model.named_parameters():
        dtype = p.dtype
        dtype2param_num[dtype] = dtype2param_num.get(dtype, 0) + p.numel()
        dtype2param_name.setdefault(dtype, []).append(name)
    total = sum(dtype2param_num.values())
    print("verify all params of the model")
    for k, v in dtype2param_num.items():
        print(k, v, v / total)
    print("verify trainable params the model")
    trainable = {}
    for name, p in model.named_parameters():
        if p.requires_grad:
            trainable[p.dtype] = trainable.get(p.dtype, 0) + p.numel()
    for k, v in trainable.items():
        print(k, v, v / total)


def find_all_linear_names(model):
    """Find all 4-bit linear layers so that LoRA adapters are added to every one of them."""
    cls = bnb.nn.Linear4bit
    lora_module_names = set()
    for name, module in model.named_modules():
        if isinstance(module, cls):
            names = name.split(".")
            lora_module_names.add(names[0] if len(names) == 1 else names[-1])
    if "lm_head" in lora_module_names:  # needed for 16-bit
        lora_module_names.remove("lm_head")
    return list(lora_module_names)


def setup_everything():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_args_file", type=str, default="train_args/qlora/baichuan-7b-sft-qlora.json")
    parser.add_argument("--local_rank", type=int, help="")
    args = parser.parse_args()
    train_args_file = args.train_args_file
    parser = HfArgumentParser((QLoRAArguments, TrainingArguments))
    args, training_args = parser.parse_json_file(json_file=train_args_file)
    if not os.path.exists(training_args.output_dir):
        os.makedirs(training_args.output_dir)
    logger.add(join(training_args.output_dir, "train.log"))
    logger.info("train_args:{}".format(training_args))
    with open(train_args_file, "r") as f:
        train_args = json.load(f)
    with open(join(training_args.output_dir, "train_args.json"), "w") as f:
        json.dump(train_args, f, indent=4)
    set_seed(training_args.seed)
    return args, training_args


def init_components(args, training_args):
    logger.info("Initializing components...")
    training_args.ddp_find_unused_parameters = False
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    ddp = world_size != 1
    device_map = {"": local_rank} if ddp else "auto"

    model = AutoModelForCausalLM.from_pretrained(
        args.model_name_or_path,
        device_map=device_map,
        load_in_4bit=True,
        torch_dtype=torch.float16,
        trust_remote_code=True,
        quantization_config=BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_compute_dtype=torch.float16,
            bnb_4bit_use_double_quant=True,
            bnb_4bit_quant_type="nf4",
            llm_int8_threshold=6.0,
            llm_int8_has_fp16_weight=False,
        ),
    )
    if not ddp and torch.cuda.device_count() > 1:
        # keeps Trainer from putting the model into DataParallel when it is split over cards
        model.is_parallelizable = True
        model.model_parallel = True

    tokenizer = AutoTokenizer.from_pretrained(
        args.model_name_or_path, trust_remote_code=True,
        use_fast=False if model.config.model_type == "llama" else True)
    if tokenizer.__class__.__name__ == "QWenTokenizer":
        tokenizer.pad_token_id = tokenizer.eod_id
        tokenizer.bos_token_id = tokenizer.eod_id
        tokenizer.eos_token_id = tokenizer.eod_id
    if model.config.model_type == "chatglm":
        tokenizer.pad_token_id = 0
    assert tokenizer.pad_token_id is not None, "pad_token_id should not be None"

    model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=training_args.gradient_checkpointing)
    print(f"memory footprint of model: {model.get_memory_footprint() / (1024 * 1024 * 1024)} GB")
    target_modules = find_all_linear_names(model)
    config = LoraConfig(r=args.lora_rank, lora_alpha=args.lora_alpha, target_modules=target_modules,
                        lora_dropout=args.lora_dropout, bias="none", task_type="CAUSAL_LM")
    model = get_peft_model(model, config)
    model.print_trainable_parameters()
    model.config.torch_dtype = torch.float32
    verify_model_dtype(model)

    loss_func = TargetLMLoss(ignore_index=tokenizer.pad_token_id)
    if model.config.model_type == "chatglm":
        train_dataset = ChatGLM2SFTDataset(args.train_file, tokenizer, args.max_seq_length)
    else:
        train_dataset = SFTDataset(args.train_file, tokenizer, args.max_seq_length)
    data_collator = SFTDataCollator(tokenizer, args.max_seq_length)

    # paged optimizer keeps optimizer state in unified memory and pages it on OOM spikes
    training_args.optim = "paged_adamw_32bit"
    trainer = LoRATrainer(model=model, args=training_args, train_dataset=train_dataset,
                          tokenizer=tokenizer, data_collator=data_collator, compute_loss=loss_func)
    return trainer


def main():
    args, training_args = setup_everything()
    trainer = init_components(args, training_args)
    logger.info("*** starting training ***")
    train_result = trainer.train()
    final_save_path = join(training_args.output_dir, "final")
    trainer.save_model(final_save_path)
    metrics = train_result.metrics
    trainer.log_metrics("train", metrics)
    trainer.save_metrics("train", metrics)
    trainer.save_state()


if __name__ == "__main__":
    main()
