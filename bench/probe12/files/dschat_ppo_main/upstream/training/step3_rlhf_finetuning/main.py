#!/usr/bin/env python
# DeepSpeed-Chat style step 3: PPO fine-tuning of an SFT actor against a reward model.
import argparse
import os
import random
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, RandomSampler
from torch.utils.data.distributed import DistributedSampler
from transformers import SchedulerType, default_data_collator

import deepspeed

from rlhf_engine import DeepSpeedRLHFEngine
from ppo_trainer import DeepSpeedPPOTrainer, DeepSpeedPPOTrainerUnsupervised
from utils.data.data_utils import MiniDataset, create_prompt_dataset, DataCollatorRLHF
from utils.utils import print_rank_0, to_device, save_hf_format, get_all_reduce_mean, moving_average
from utils.module.lora import convert_lora_to_linear_layer
from utils.model.model_utils import load_hf_tokenizer


def parse_args():
    parser = argparse.ArgumentParser(description="(Step 3) RLHF training arguments")
    parser.add_argument("--data_path", nargs="*", default=["Dahoas/rm-static"])
    parser.add_argument("--data_split", type=str, default="2,4,4")
    parser.add_argument("--actor_model_name_or_path", type=str, required=True)
    parser.add_argument("--critic_model_name_or_path", type=str, required=True)
    parser.add_argument("--num_padding_at_beginning", type=int, default=1)
    parser.add_argument("--per_device_generation_batch_size", type=int, default=16)
    parser.add_argument("--per_device_training_batch_size", type=int, default=16)
    parser.add_argument("--generation_batches", type=int, default=1)
    parser.add_argument("--ppo_epochs", type=int, default=1)
    parser.add_argument("--max_prompt_seq_len", type=int, default=256)
    parser.add_argument("--max_answer_seq_len", type=int, default=256)
    parser.add_argument("--actor_learning_rate", type=float, default=9.65e-6)
    parser.add_argument("--critic_learning_rate", type=float, default=5e-6)
    parser.add_argument("--num_train_epochs", type=int, default=1)
    parser.add_argument("--lr_scheduler_type", type=SchedulerType, default="cosine")
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--num_warmup_steps", type=int, default=100)
    parser.add_argument("--output_dir", type=str, default=None)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--enable_hybrid_engine", action="store_true")
    parser.add_argument("--offload", action="store_true")
    parser.add_argument("--offload_reference_model", action="store_true")
    parser.add_argument("--actor_zero_stage", type=int, default=0)
    parser.add_argument("--critic_zero_stage", type=int, default=0)
    parser.add_argument("--actor_gradient_checkpointing", action="store_true")
    parser.add_argument("--critic_gradient_checkpointing", action="store_true")
    parser.add_argument("--actor_dropout", type=float, default=None)
    parser.add_argument("--enable_ema", action="store_true")
    parser.add_argument("--enable_mixed_precision_lora", action="store_true")
    parser.add_argument("--actor_lora_dim", type=int, default=0)
    parser.add_argument("--critic_lora_dim", type=int, default=0)
    parser.add_argument("--unsupervised_dataset_name", type=str, default=None)
    parser.add_argument("--unsup_coef", type=float, default=27.8)
    parser.add_argument("--enable_tensorboard", action="store_true")
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    if args.enable_hybrid_engine and args.actor_zero_stage == 3 and args.offload:
        raise ValueError("Hybrid engine with ZeRO-3 offload is not supported")
    return args


def set_random_seed(seed):
    if seed is not None:
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        torch.cuda.manual_seed_all(seed)


def create_datasets(args, tokenizer, train_phase=3):
    unsupervised_training_enabled = args.unsupervised_dataset_name is not None
    prompt_train_dataset, _ = create_prompt_dataset(
        args.local_rank, args.data_path, args.data_split, args.data_output_path, train_phase, args.seed,
        tokenizer, args.max_prompt_seq_len)
    data_collator = DataCollatorRLHF(args.max_prompt_seq_len, args.inference_tp_size)
    if args.local_rank == -1:
        prompt_train_sampler = RandomSampler(prompt_train_dataset)
    else:
        prompt_train_sampler = DistributedSampler(prompt_train_dataset)
    prompt_train_dataloader = DataLoader(prompt_train_dataset, collate_fn=data_collator,
                                         sampler=prompt_train_sampler,
                                         batch_size=args.per_device_generation_batch_size)
    num_update_steps_per_epoch = len(prompt_train_dataloader) * \
        (args.per_device_generation_batch_size / args.per_device_training_batch_size) * \
        args.ppo_epochs / args.gradient_accumulation_steps
    num_total_iters = int(args.num_train_epochs * num_update_steps_per_epoch)
    return prompt_train_dataloader, None, num_total_iters


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
    set_random_seed(args.seed)
    torch.distributed.barrier()

    tokenizer = load_hf_tokenizer(args.actor_model_name_or_path, fast_tokenizer=True)
    tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    prompt_train_dataloader, _, num_total_iters = create_datasets(args=args, tokenizer=tokenizer, train_phase=3)

    rlhf_engine = DeepSpeedRLHFEngine(actor_model_name_or_path=args.actor_model_name_or_path,
                                      critic_model_name_or_path=args.critic_model_name_or_path,
                                      tokenizer=tokenizer, num_total_iters=num_total_iters, args=args)
    args.end_of_conversation_token = "<|endoftext|>"
    ppo_trainer = DeepSpeedPPOTrainerUnsupervised if args.unsupervised_dataset_name else DeepSpeedPPOTrainer
    trainer = ppo_trainer(rlhf_engine, args)

    exp_mini_dataset = MiniDataset(args.generation_batches, args.per_device_training_batch_size)
    print_rank_0("***** Running training *****", args.global_rank)
    non_overflow_step_count = 0
    for epoch in range(args.num_train_epochs):
        print_rank_0(f"Beginning of Epoch {epoch + 1}/{args.num_train_epochs}, "
                     f"Total Generation Batches {len(prompt_train_dataloader)}", args.global_rank)
        for step, batch_prompt in enumerate(prompt_train_dataloader):
            batch_prompt = to_device(batch_prompt, device)
            start = time.time()
            out = trainer.generate_experience(batch_prompt["prompt"], batch_prompt["prompt_att_mask"], step)
            torch.cuda.synchronize()
            gen_time = time.time() - start
            exp_dataset = exp_mini_dataset.add(out)

            if exp_dataset is not None:
                inner_iter = 0
                actor_loss_sum, critic_loss_sum = 0, 0
                average_reward = 0
                if args.actor_gradient_checkpointing:
                    rlhf_engine.actor.gradient_checkpointing_enable()
                for ppo_ep in range(args.ppo_epochs):
                    for i, exp_data in enumerate(exp_dataset):
                        actor_loss, critic_loss = trainer.train_rlhf(exp_data)
                        actor_loss_sum += actor_loss.item()
                        critic_loss_sum += critic_loss.item()
                        average_reward += exp_data["rewards"].mean()
                        inner_iter += 1
                        if args.enable_ema:
                            moving_average(rlhf_engine.actor, rlhf_engine.actor_ema,
                                           zero_stage=args.actor_zero_stage)
                    random.shuffle(exp_dataset)

                average_reward = get_all_reduce_mean(average_reward).item()
                print_rank_0(f"Epoch {epoch} | Step {step} | gen {gen_time:.2f}s | act_loss "
                             f"{actor_loss_sum / inner_iter:.4f} | cri_loss {critic_loss_sum / inner_iter:.4f} | "
                             f"reward {average_reward / inner_iter:.4f} | "
                             f"mem {torch.cuda.max_memory_allocated() / 1e9:.1f}GB", args.global_rank)
                actor_overflow, critic_overflow = trainer.get_overflow()
                if not actor_overflow and not critic_overflow:
                    non_overflow_step_count += 1
                if args.actor_gradient_checkpointing:
                    rlhf_engine.actor.gradient_checkpointing_disable()

    if args.output_dir is not None:
        print_rank_0("saving model ...", args.global_rank)
        rlhf_engine.actor = convert_lora_to_linear_layer(rlhf_engine.actor)
        rlhf_engine.critic = convert_lora_to_linear_layer(rlhf_engine.critic)
        if args.global_rank == 0:
            save_hf_format(rlhf_engine.actor, tokenizer, args, sub_folder="actor")
            save_hf_format(rlhf_engine.critic, tokenizer, args, sub_folder="critic")


if __name__ == "__main__":
    main()
