#!/usr/bin/env python
# DeepSpeed-Chat-style supervised fine-tuning entry point (synthetic imitation).
import argparse
import math
import os
import time

import torch
from torch.utils.data import DataLoader, RandomSampler
from torch.utils.data.distributed import DistributedSampler

import deepspeed
from deepspeed.accelerator import get_accelerator
from deepspeed.ops.adam import DeepSpeedCPUAdam, FusedAdam
from transformers import AutoModelForCausalLM, AutoTokenizer, SchedulerType, get_scheduler

from utils.data.data_utils import create_prompt_dataset
from utils.utils import print_rank_0, to_device, save_hf_format, set_random_seed, get_all_reduce_mean
from utils.utils import get_optimizer_grouped_parameters, save_zero_three_model

os.environ["NCCL_ASYNC_ERROR_HANDLING"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

GLOBAL_BATCH_SIZE = 32
MICRO_BATCH_SIZE = 4


def get_train_ds_config(offload, dtype, stage=2, enable_hybrid_engine=False, inference_tp_size=1,
                        max_out_tokens=512, tb_path="", tb_name=""):
    device = "cpu" if offload else "none"
    if dtype == "fp16":
        data_type = "fp16"
        dtype_config = {"enabled": True, "loss_scale_window": 100}
    elif dtype == "bf16":
        data_type = "bfloat16"
        dtype_config = {"enabled": True}
    zero_opt_dict = {
        "stage": stage,
        "overlap_comm": True,
        "offload_param": {"device": device},
        "offload_optimizer": {"device": device, "pin_memory": True},
        "stage3_param_persistence_threshold": 1e4,
        "stage3_max_live_parameters": 3e7,
        "stage3_prefetch_bucket_size": 3e7,
        "memory_efficient_linear": False,
    }
    return {
        "train_batch_size": GLOBAL_BATCH_SIZE,
        "train_micro_batch_size_per_gpu": MICRO_BATCH_SIZE,
        "steps_per_print": 10,
        "zero_optimization": zero_opt_dict,
        data_type: dtype_config,
        "gradient_clipping": 1.0,
        "prescale_gradients": False,
        "wall_clock_breakdown": False,
        "hybrid_engine": {
            "enabled": enable_hybrid_engine,
            "max_out_tokens": max_out_tokens,
            "inference_tp_size": inference_tp_size,
            "pin_parameters": True,
        },
        "tensorboard": {"enabled": bool(tb_path), "output_path": f"{tb_path}/ds_tensorboard_logs/",
                        "job_name": f"{tb_name}_tensorboard"},
    }


def parse_args():
    parser = argparse.ArgumentParser(description="Finetune a transformers model on a causal language modeling task")
    parser.add_argument("--data_path", nargs="*", default=["Dahoas/rm-static"])
    parser.add_argument("--model_name_or_path", type=str, required=True)
    parser.add_argument("--per_device_train_batch_size", type=int, default=MICRO_BATCH_SIZE)
    parser.add_argument("--max_seq_len", type=int, default=512)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--weight_decay", type=float, default=0.0)
    parser.add_argument("--num_train_epochs", type=int, default=1)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--lr_scheduler_type", type=SchedulerType, default="cosine")
    parser.add_argument("--num_warmup_steps", type=int, default=0)
    parser.add_argument("--output_dir", type=str, default=None)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--local_rank", type=int, default=-1, help="local_rank for distributed training on gpus")
    parser.add_argument("--gradient_checkpointing", action="store_true")
    parser.add_argument("--offload", action="store_true", help="Enable ZeRO Offload techniques.")
    parser.add_argument("--dtype", type=str, default="fp16", choices=["fp16", "bf16"])
    parser.add_argument("--zero_stage", type=int, default=0)
    parser.add_argument("--use_flash_attn", action="store_true")
    parser = deepspeed.add_config_arguments(parser)
    return parser.parse_args()


def evaluation(model, eval_dataloader, device):
    model.eval()
    losses = 0
    for step, batch in enumerate(eval_dataloader):
        batch = to_device(batch, device)
        with torch.no_grad():
            outputs = model(**batch)
        losses += outputs.loss.float()
    losses = losses / (step + 1)
    try:
        perplexity = torch.exp(get_all_reduce_mean(losses)).item()
    except OverflowError:
        perplexity = float("inf")
    return perplexity


def main():
    args = parse_args()

    if args.local_rank == -1:
        device = torch.device("cuda")
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        # Initializes the distributed backend which will take care of sychronizing nodes/GPUs
        deepspeed.init_distributed(dist_backend="nccl")

    args.global_rank = torch.distributed.get_rank()
    ds_config = get_train_ds_config(offload=args.offload, dtype=args.dtype, stage=args.zero_stage)
    ds_config["train_micro_batch_size_per_gpu"] = args.per_device_train_batch_size
    ds_config["train_batch_size"] = (args.per_device_train_batch_size * torch.distributed.get_world_size()
                                     * args.gradient_accumulation_steps)

    # If passed along, set the training seed now.
    set_random_seed(args.seed)
    torch.distributed.barrier()

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path, fast_tokenizer=True)
    tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(
        args.model_name_or_path,
        torch_dtype=torch.bfloat16 if args.dtype == "bf16" else torch.float16,
        attn_implementation="flash_attention_2" if args.use_flash_attn else "eager",
    )
    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable()

    train_dataset, eval_dataset = create_prompt_dataset(args.local_rank, args.data_path, args.output_dir,
                                                        args.seed, tokenizer, args.max_seq_len)
    train_sampler = RandomSampler(train_dataset) if args.local_rank == -1 else DistributedSampler(train_dataset)
    eval_sampler = DistributedSampler(eval_dataset, shuffle=False) if args.local_rank != -1 else None
    train_dataloader = DataLoader(train_dataset, sampler=train_sampler, batch_size=args.per_device_train_batch_size,
                                  pin_memory=True, num_workers=4)
    eval_dataloader = DataLoader(eval_dataset, sampler=eval_sampler, batch_size=args.per_device_train_batch_size)

    optimizer_grouped_parameters = get_optimizer_grouped_parameters(model, args.weight_decay)
    AdamOptimizer = DeepSpeedCPUAdam if args.offload else FusedAdam
    optimizer = AdamOptimizer(optimizer_grouped_parameters, lr=args.learning_rate, betas=(0.9, 0.95))

    num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
    lr_scheduler = get_scheduler(name=args.lr_scheduler_type, optimizer=optimizer,
                                 num_warmup_steps=args.num_warmup_steps,
                                 num_training_steps=args.num_train_epochs * num_update_steps_per_epoch)

    model, optimizer, _, lr_scheduler = deepspeed.initialize(model=model, optimizer=optimizer, args=args,
                                                             config=ds_config, lr_scheduler=lr_scheduler,
                                                             dist_init_required=True)

    print_rank_0("***** Running training *****", args.global_rank)
    perplexity = evaluation(model, eval_dataloader, device)
    print_rank_0(f"ppl: {perplexity}", args.global_rank)

    for epoch in range(args.num_train_epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            start = time.time()
            batch = to_device(batch, device)
            outputs = model(**batch, use_cache=False)
            loss = outputs.loss
            model.backward(loss)
            model.step()
            torch.cuda.synchronize()
            end = time.time()
            if torch.distributed.get_rank() == 0 and step % 10 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f} "
                      f"time {end - start:.3f}s "
                      f"mem {get_accelerator().max_memory_allocated() / 2**30:.2f}GB")
        perplexity = evaluation(model, eval_dataloader, device)
        print_rank_0(f"ppl: {perplexity}", args.global_rank)

    if args.output_dir is not None:
        if args.global_rank == 0:
            save_hf_format(model, tokenizer, args)
        if args.zero_stage == 3:
            save_zero_three_model(model, args.global_rank, args.output_dir, zero_stage=args.zero_stage)


def build_inference_engine(model, mp_size=1):
    """Wrap a trained model for generation with DeepSpeed-Inference kernel injection."""
    engine = deepspeed.init_inference(model,
                                      mp_size=mp_size,
                                      dtype=torch.half,
                                      replace_with_kernel_inject=True)
    return engine.module


if __name__ == "__main__":
    main()
