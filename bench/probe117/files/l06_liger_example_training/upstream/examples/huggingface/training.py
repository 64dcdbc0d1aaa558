"""Fine-tune a causal LM on Alpaca with and without Liger kernels and compare
throughput / peak memory.

    torchrun --nnodes=1 --nproc-per-node=8 training.py \
        --model_name meta-llama/Meta-Llama-3-8B --use_liger True ...
"""
import os
import time

from dataclasses import dataclass

import datasets
import torch
import transformers

from callback import EfficiencyCallback
from trl import DataCollatorForCompletionOnlyLM
from trl import SFTTrainer

from liger_kernel.transformers import AutoLigerKernelForCausalLM


@dataclass
class CustomArguments:
    model_name: str = "meta-llama/Meta-Llama-3-8B"
    dataset: str = "tatsu-lab/alpaca"
    max_seq_length: int = 512
    use_liger: bool = False
    attn_implementation: str = "flash_attention_2"
    compile_loss: bool = False


def formatting_prompts_func(example):
    return example["text"]


def _rank0_print(*args):
    if int(os.environ.get("LOCAL_RANK", "0")) == 0:
        print(*args, flush=True)


def train():
    parser = transformers.HfArgumentParser((transformers.TrainingArguments, CustomArguments))
    training_args, custom_args = parser.parse_args_into_dataclasses()

    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    if not torch.distributed.is_initialized() and int(os.environ.get("WORLD_SIZE", "1")) > 1:
        torch.distributed.init_process_group(backend="nccl")

    tokenizer = transformers.AutoTokenizer.from_pretrained(
        custom_args.model_name,
        padding_side="left",
        truncation_side="left",
    )
    tokenizer.pad_token = tokenizer.eos_token

    dataset = datasets.load_dataset(custom_args.dataset)["train"].train_test_split(test_size=0.1)
    train_dataset = dataset["train"]
    eval_dataset = dataset["test"]
    response_prompt = tokenizer.encode("### Response:\n", add_special_tokens=False)
    collator = DataCollatorForCompletionOnlyLM(
        tokenizer=tokenizer,
        response_template=response_prompt,
        pad_to_multiple_of=16,
    )

    model_kwargs = dict(
        use_cache=False,
        torch_dtype=torch.bfloat16,
        attn_implementation=custom_args.attn_implementation,
    )
    if custom_args.use_liger:
        model = AutoLigerKernelForCausalLM.from_pretrained(
            custom_args.model_name,
            trust_remote_code=True,
            # These args will get passed to the appropriate apply_liger_kernel_to_* function
            # to override the default settings
            # cross_entropy=True,
            # fused_linear_cross_entropy=False,
            **model_kwargs,
        )
    else:
        model = transformers.AutoModelForCausalLM.from_pretrained(
            custom_args.model_name,
            trust_remote_code=True,
            **model_kwargs,
        )

    if custom_args.compile_loss:
        model.loss_function = torch.compile(model.loss_function, mode="max-autotune")

    trainer = SFTTrainer(
        model=model,
        args=training_args,
        data_collator=collator,
        max_seq_length=custom_args.max_seq_length,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        formatting_func=formatting_prompts_func,
        callbacks=[EfficiencyCallback()],
    )

    torch.cuda.reset_peak_memory_stats()
    start = time.time()
    trainer.train()
    torch.cuda.synchronize()
    elapsed = time.time() - start
    peak_gb = torch.cuda.max_memory_allocated() / 2**30
    _rank0_print(
        f"liger={custom_args.use_liger} train time {elapsed:.1f}s, peak memory {peak_gb:.2f} GB "
        f"on {torch.cuda.get_device_name(local_rank)}"
    )


if __name__ == "__main__":
    train()
