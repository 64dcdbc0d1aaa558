"""Train a RetNet causal LM with the HuggingFace Trainer.

    torchrun --nproc_per_node 8 train.py --model_size 1.3b --dataset_name wikitext \
        --dataset_config wikitext-103-raw-v1 --max_length 2048 --output_dir checkpoints/retnet-1.3b
"""
import math
import os
from dataclasses import dataclass, field
from typing import Optional

import torch
from datasets import load_dataset
from transformers import (
    AutoTokenizer,
    DataCollatorForLanguageModeling,
    HfArgumentParser,
    Trainer,
    TrainerCallback,
    TrainingArguments,
)

from retnet.configuration_retnet import load_config_from_json
from retnet.modeling_retnet import RetNetForCausalLM


@dataclass
class MyArgs:
    model_size: Optional[str] = field(default="300m")
    dataset_name: str = field(default="wikitext")
    dataset_config: Optional[str] = field(default="wikitext-103-raw-v1")
    text_col: str = field(default="text")
    max_length: int = field(default=2048)
    tokenizer_name: str = field(default="gpt2")
    output_dir: str = field(default="checkpoints/retnet")
    per_device_batch_size: int = field(default=8)
    grad_accum: int = field(default=4)
    learning_rate: float = field(default=6e-4)
    max_steps: int = field(default=100000)
    chunkwise_recurrent: bool = field(default=True)
    recurrent_chunk_size: int = field(default=512)


class NvtxStepCallback(TrainerCallback):
    """Mark every optimizer step as an NVTX range so that `nsys profile` timelines line up with steps."""

    def on_step_begin(self, args, state, control, **kwargs):
        torch.cuda.nvtx.range_push(f"step{state.global_step}")

    def on_step_end(self, args, state, control, **kwargs):
        torch.cuda.nvtx.range_pop()


class MemoryLogCallback(TrainerCallback):
    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is not None and state.is_world_process_zero:
            logs["max_mem_gb"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
            torch.cuda.reset_peak_memory_stats()


def main():
    parser = HfArgumentParser(MyArgs)
    args, = parser.parse_args_into_dataclasses()

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer_name)
    tokenizer.pad_token = tokenizer.eos_token

    config = load_config_from_json(f"configs/retnet-{args.model_size}/config.json")
    config.vocab_size = len(tokenizer)
    config.pad_token_id = tokenizer.pad_token_id
    config.eos_token_id = tokenizer.eos_token_id
    config.use_cache = False
    config.forward_impl = "chunkwise" if args.chunkwise_recurrent else "parallel"
    config.recurrent_chunk_size = args.recurrent_chunk_size
    model = RetNetForCausalLM(config)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"RetNet-{args.model_size}: {n_params / 1e6:.1f}M parameters")

    raw = load_dataset(args.dataset_name, args.dataset_config)

    def tokenize(examples):
        return tokenizer(examples[args.text_col])

    tokenized = raw.map(tokenize, batched=True, remove_columns=raw["train"].column_names, num_proc=16)

    block_size = args.max_length

    def group_texts(examples):
        concatenated = {k: sum(examples[k], []) for k in examples.keys()}
        total_length = len(concatenated[list(examples.keys())[0]])
        total_length = (total_length // block_size) * block_size
        return {
            k: [t[i: i + block_size] for i in range(0, total_length, block_size)]
            for k, t in concatenated.items()
        }

    lm_datasets = tokenized.map(group_texts, batched=True, num_proc=16)
    collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)

    train_args = TrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.per_device_batch_size,
        per_device_eval_batch_size=args.per_device_batch_size,
        gradient_accumulation_steps=args.grad_accum,
        learning_rate=args.learning_rate,
        lr_scheduler_type="cosine",
        warmup_steps=2000,
        weight_decay=0.05,
        adam_beta1=0.9,
        adam_beta2=0.98,
        max_grad_norm=2.0,
        max_steps=args.max_steps,
        bf16=True,
        tf32=True,
        optim="adamw_apex_fused",
        ddp_backend="nccl",
        ddp_find_unused_parameters=False,
        dataloader_pin_memory=True,
        dataloader_num_workers=4,
        gradient_checkpointing=True,
        logging_steps=20,
        save_steps=5000,
        eval_steps=5000,
        evaluation_strategy="steps",
        save_total_limit=3,
        report_to="tensorboard",
    )

    callbacks = [MemoryLogCallback()]
    if os.environ.get("NVTX_PROFILE", "0") == "1":
        callbacks.append(NvtxStepCallback())

    trainer = Trainer(
        model=model,
        args=train_args,
        train_dataset=lm_datasets["train"],
        eval_dataset=lm_datasets["validation"],
        data_collator=collator,
        callbacks=callbacks,
    )

    trainer.train()
    metrics = trainer.evaluate()
    metrics["perplexity"] = math.exp(metrics["eval_loss"])
    trainer.log_metrics("eval", metrics)
    trainer.save_model(os.path.join(args.output_dir, "final"))


if __name__ == "__main__":
    main()
