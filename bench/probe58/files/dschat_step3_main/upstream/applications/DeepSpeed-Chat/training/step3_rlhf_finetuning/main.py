#!/usr/bin/env python
# Copyright (c) Microsoft Corporation.
# SPDX-License-Identifier: Apache-2.0

# DeepSpeed Team
"""

engine = DeepSpeedRLHFEngine(actor_model_name_or_path=actor_model_name_or_path,
                             critic_model_name_or_path=critic_model_name_or_path,
                             tokenizer=tokenizer,
                             args=args)
trainer = DeepSpeedPPOTrainer(engine=engine, args=args)

for prompt_batch in prompt_train_dataloader:
    out = trainer.generate_experience(prompt_batch)
    actor_loss, critic_loss = trainer.train_rlhf(out)

"""
import argparse
import os
import random
import time

import deepspeed
import torch
from deepspeed.accelerator import get_accelerator
from torch.utils.data import DataLoader, RandomSampler
from torch.utils.data.distributed import DistributedSampler
from transformers import SchedulerType, default_data_collator

from dschat.rlhf.ppo_trainer import DeepSpeedPPOTrainer, DeepSpeedPPOTrainerUnsupervised
from dschat.rlhf.rlhf_engine import DeepSpeedRLHFEngine
from dschat.utils.data.data_utils import DataCollatorRLHF, MiniDataset, create_prompt_dataset, get_unsupervised_data
from dschat.utils.module.lora import convert_lora_to_linear_layer
from dschat.utils.perf import print_throughput_step3
from dschat.utils.utils import ExponentialMovingAverage, get_all_reduce_mean, load_hf_tokenizer, moving_average, print_rank_0, save_hf_format, save_zero_three_model, set_random_seed

writer = None


def parse_args():
    global writer
    parser = argparse.ArgumentParser(description="(Step 3) RLHF training arguments")

    parser.add_argument("--algo", type=str, default="ppo", help="Algorithm name")
    parser.add_argument("--data_path", nargs="*", default=["Dahoas/rm-static"], help="Path to the training dataset.")
    parser.add_argument("--data_split", type=str, default="2,4,4", help="Comma-separated list of proportions for training phase 1, 2, and 3 data.")
    parser.add_argument("--data_output_path", type=str, default="/tmp/data_files", help="Where to store the data-related files.")
    parser.add_argument("--unsupervised_dataset_name", type=str, default=None, help="The name of the dataset to use (via the datasets library).")
    parser.add_argument("--unsupervised_dataset_config_name", type=str, default=None)
    parser.add_argument("--unsup_coef", type=float, default=27.8, help="gamma in Equation 2 from InstructGPT paper")
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
    parser.add_argument("--actor_weight_decay", type=float, default=0.0)
    parser.add_argument("--critic_weight_decay", type=float, default=0.0)
    parser.add_argument("--num_train_epochs", type=int, default=1)
    parser.add_argument("--lr_scheduler_type", type=SchedulerType, default="cosine")
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--num_warmup_steps", type=int, default=100)
    parser.add_argument("--output_dir", type=str, default=None)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--preprocessing_num_workers", type=int, default=None)
    parser.add_argument("--local_rank", type=int, default=-1, help="local_rank for distributed training on gpus")

    # DeepSpeed
    parser.add_argument("--enable_hybrid_engine", action="store_true", help="Enable hybrid engine for actor model to optimize both inference and training through DeepSpeed.")
    parser.add_argument("--unpin_actor_parameters", action="store_true")
    parser.add_argument("--release_inference_cache", action="store_true")
    parser.add_argument("--inference_tp_size", type=int, default=1)
    parser.add_argument("--tp_gather_partition_size", type=int, default=8)
    parser.add_argument("--offload", action="store_true", help="Enable ZeRO Offload techniques.")
    parser.add_argument("--offload_reference_model", action="store_true")
    parser.add_argument("--actor_zero_stage", type=int, default=0)
    parser.add_argument("--critic_zero_stage", type=int, default=0)
    parser.add_argument("--actor_gradient_checkpointing", action="store_true")
    parser.add_argument("--critic_gradient_checkpointing", action="store_true")
    parser.add_argument("--actor_dropout", type=float, default=None)
    parser.add_argument("--dtype", type=str, default="fp16", choices=["fp16", "bf16"], help="Training data type")

    # LoRA for efficient training setting
    parser.add_argument("--actor_lora_dim", type=int, default=0)
    parser.add_argument("--actor_lora_module_name", type=str, default="decoder.layers.")
    parser.add_argument("--critic_lora_dim", type=int, default=0)
    parser.add_argument("--critic_lora_module_name", type=str, default="decoder.layers.")
    parser.add_argument("--only_optimize_lora", action="store_true")

    # EMA / mixed precision LoRA / tensorboard
    parser.add_argument("--enable_ema", action="store_true")
    parser.add_argument("--enable_mixed_precision_lora", action="store_true")
    parser.add_argument("--compute_fp32_loss", action="store_true")
    parser.add_argument("--enable_tensorboard", action="store_true")
    parser.add_argument("--tensorboard_path", type=str, default="step3_tensorboard")
    parser.add_argument("--print_answers", action="store_true")
    parser.add_argument("--print_answers_interval", type=int, default=1)
    parser.add_argument("--enable_test_mode", action="store_true")
    parser.add_argument("--test_stop_step", type=int, default=0)

    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()

    if args.enable_tensorboard:
        print(f"Tensorboard logs going to: {args.tensorboard_path}/step3_tensorboard_logs")
        from torch.utils.tensorboard import SummaryWriter

        writer = SummaryWriter(f"{args.tensorboard_path}/step3_tensorboard_logs")

    # Validate settings
    if args.inference_tp_size > 1:
        assert args.actor_zero_stage == 3, "Zero stage 3 must be used to do Tensor sharding in the hybrid engine"

    if args.actor_zero_stage == 2 and args.critic_zero_stage == 2 and args.enable_hybrid_engine and args.offload and args.actor_lora_dim == 0:
        raise ValueError("The combination of [actor_zero_stage==2, critic_zero_stage==2, enable_hybrid_engine=True, offload=True, lora=False] is currently unsupported due to training instability!")

    return args


def create_datasets(args, tokenizer, train_phase=3):
    unsupervised_training_enabled = args.unsupervised_dataset_name and args.unsupervised_dataset_config_name
    prompt_train_dataset, _ = create_prompt_dataset(
        args.local_rank, args.data_path, args.data_split, args.data_output_path, train_phase, args.seed, tokenizer, args.max_prompt_seq_len
    )
    if unsupervised_training_enabled:
        unsupervised_train_dataset = get_unsupervised_data(args, tokenizer)
    else:
        unsupervised_train_dataset = None

    # DataLoaders creation:
    data_collator = DataCollatorRLHF(args.max_prompt_seq_len, args.inference_tp_size)
    if args.local_rank == -1:
        prompt_train_sampler = RandomSampler(prompt_train_dataset)
        if unsupervised_training_enabled:
            unsupervised_train_sampler = RandomSampler(unsupervised_train_dataset)
    else:
        prompt_train_sampler = DistributedSampler(prompt_train_dataset)
        if unsupervised_training_enabled:
            unsupervised_train_sampler = DistributedSampler(unsupervised_train_dataset)
    prompt_train_dataloader = DataLoader(prompt_train_dataset, collate_fn=data_collator, sampler=prompt_train_sampler, batch_size=args.per_device_generation_batch_size, pin_memory=True)
    if unsupervised_training_enabled:
        unsupervised_train_dataloader = DataLoader(unsupervised_train_dataset, collate_fn=default_data_collator, sampler=unsupervised_train_sampler, batch_size=args.per_device_generation_batch_size)
    else:
        unsupervised_train_dataloader = [None] * len(prompt_train_dataloader)  # basically a dummy dataloader

    num_update_steps_per_epoch = min(len(prompt_train_dataloader), len(unsupervised_train_dataloader)) * (args.per_device_generation_batch_size / args.per_device_training_batch_size) * args.ppo_epochs / args.gradient_accumulation_steps
    num_total_iters = int(args.num_train_epochs * num_update_steps_per_epoch)

    return prompt_train_dataloader, unsupervised_train_dataloader, num_total_iters


def main():
    args = parse_args()

    if args.local_rank == -1:
        device = torch.device("cuda")
    else:
        torch.cuda.set_device(args.local_rank)
        device = torch.device("cuda", args.local_rank)
        # Initializes the distributed backend which will take care of sychronizing nodes/GPUs
        deepspeed.init_distributed()

    args.global_rank = torch.distributed.get_rank()

    unsupervised_training_enabled = args.unsupervised_dataset_name and args.unsupervised_dataset_config_name
    if unsupervised_training_enabled:
        # if we enable unsupervised training, we need to double the batch size for actor model
        args.gradient_accumulation_steps_actor = args.gradient_accumulation_steps * 2
    else:
        args.gradient_accumulation_steps_actor = args.gradient_accumulation_steps

    # If passed along, set the training seed now.
    set_random_seed(args.seed)
    torch.distributed.barrier()

    # load_hf_tokenizer will get the correct tokenizer and set padding tokens based on the model family
    args.end_of_conversation_token = "<|endoftext|>"
    additional_special_tokens = args.end_of_conversation_token
    tokenizer = load_hf_tokenizer(args.actor_model_name_or_path, fast_tokenizer=True, add_special_tokens=additional_special_tokens)
    prompt_train_dataloader, unsupervised_train_dataloader, num_total_iters = create_datasets(args=args, tokenizer=tokenizer, train_phase=3)

    # RLHF engine is responsible for creating models, loading checkpoints, ds-initialize models/optims
    rlhf_engine = DeepSpeedRLHFEngine(
        actor_model_name_or_path=args.actor_model_name_or_path,
        critic_model_name_or_path=args.critic_model_name_or_path,
        tokenizer=tokenizer,
        num_total_iters=num_total_iters,
        args=args,
    )

    # Mixed Precision ZeRO++
    if args.enable_mixed_precision_lora:
        assert args.actor_lora_dim > 0, "Mixed Precision LoRA requires LoRA to be enabled"
        assert args.actor_zero_stage == 3, "Mixed Precision LoRA requires Zero stage 3"
        rlhf_engine.actor.optimizer.quantize_nontrainable_params()
        print_rank_0("Mixed Precision ZeRO++ enabled")

    ppo_trainer = DeepSpeedPPOTrainerUnsupervised if unsupervised_training_enabled else DeepSpeedPPOTrainer
    trainer = ppo_trainer(rlhf_engine, args)

    # first number is how many experience-batch to generate, second number is the training batch size, which is the micro-batch size used
    exp_mini_dataset = MiniDataset(args.generation_batches, args.per_device_training_batch_size)
    unsup_mini_dataset = MiniDataset(args.generation_batches, args.per_device_training_batch_size)

    # Train!
    print_rank_0(f"***** Running training (total_iters={num_total_iters}) *****", args.global_rank)

    non_overflow_step_count = 0
    step_average_reward = 0.0
    ema_reward_score = ExponentialMovingAverage()

    for epoch in range(args.num_train_epochs):
        print_rank_0(f"Beginning of Epoch {epoch+1}/{args.num_train_epochs}, Total Generation Batches {min(len(prompt_train_dataloader), len(unsupervised_train_dataloader))}", args.global_rank)
        for step, (batch_prompt, batch_unsupervised) in enumerate(zip(prompt_train_dataloader, unsupervised_train_dataloader)):
            batch_prompt = {k: v.to(device) for k, v in batch_prompt.items()}

            # We need to make sure that the generated sequences are of the same length
            out = trainer.generate_experience(batch_prompt["prompt"], batch_prompt["prompt_att_mask"], step)

            training_start = time.time()
            if batch_unsupervised is not None:
                batch_unsupervised = {k: v.to(device) for k, v in batch_unsupervised.items()}
                unsup_dataset = unsup_mini_dataset.add(batch_unsupervised)
            else:
                unsup_dataset = unsup_mini_dataset.add([[None] * args.per_device_generation_batch_size])

            exp_dataset = exp_mini_dataset.add(out)

            if exp_dataset is not None:
                inner_iter = 0
                actor_loss_sum, critic_loss_sum, unsup_loss_sum = 0, 0, 0
                average_reward = 0

                if args.actor_gradient_checkpointing:
                    rlhf_engine.actor.gradient_checkpointing_enable()

                for ppo_ep in range(args.ppo_epochs):
                    for i, (exp_data, unsup_data) in enumerate(zip(exp_dataset, unsup_dataset)):
                        actor_loss, critic_loss = trainer.train_rlhf(exp_data)
                        actor_loss_sum += actor_loss.item()
                        critic_loss_sum += critic_loss.item()
                        average_reward += exp_data["rewards"].mean()

                        if unsupervised_training_enabled:
                            unsup_loss = trainer.train_unsupervised(unsup_data, args.unsup_coef)
                            unsup_loss_sum += unsup_loss.item()

                        inner_iter += 1
                        if args.enable_ema:
                            moving_average(rlhf_engine.actor, rlhf_engine.actor_ema, zero_stage=args.actor_zero_stage)

                    random.shuffle(exp_dataset)
                    random.shuffle(unsup_dataset)

                end = time.time()
                training_time = end - training_start
                e2e_time = training_time + trainer.generate_time * args.generation_batches  # it is an approximation, we did not include, e.g., rw forward time etc

                print_rank_0(f"Epoch: {epoch} | Step: {step} | PPO Epoch: {ppo_ep+1} | Actor Loss: {actor_loss_sum/inner_iter} | Critic Loss: {critic_loss_sum/inner_iter} | Unsupervised Loss: {unsup_loss_sum/inner_iter}", args.global_rank)
                print_throughput_step3(rlhf_engine.actor.module, rlhf_engine.critic, args, e2e_time, trainer.generate_time, training_time, args.global_rank)

                average_reward = get_all_reduce_mean(average_reward).item()
                step_average_reward += average_reward / args.gradient_accumulation_steps_actor
                if (step + 1) % args.gradient_accumulation_steps_actor == 0:
                    ema_reward_score.update(step_average_reward)
                    step_average_reward = 0.0

                print_rank_0(f"Average reward score: {average_reward/inner_iter} | EMA reward score: {ema_reward_score.get()}", args.global_rank)
                print_rank_0("-------------------------------------------------------------------------------------", args.global_rank)

                if args.enable_tensorboard and torch.distributed.get_rank() == 0:
                    writer.add_scalar("reward", average_reward / inner_iter, global_step=step)
                    writer.add_scalar("actor_loss", actor_loss.item(), global_step=step)
                    writer.add_scalar("critic_loss", critic_loss.item(), global_step=step)
                    writer.flush()

            if args.actor_gradient_checkpointing:
                rlhf_engine.actor.gradient_checkpointing_disable()

            actor_overflow, critic_overflow = trainer.get_overflow()

            if not actor_overflow and not critic_overflow:
                non_overflow_step_count += 1

            if args.enable_test_mode and non_overflow_step_count == args.test_stop_step:
                break

            get_accelerator().empty_cache()

        if args.enable_test_mode:
            break

    if args.output_dir is not None:
        print_rank_0("saving model ...")
        rlhf_engine.actor = convert_lora_to_linear_layer(rlhf_engine.actor)
        rlhf_engine.critic = convert_lora_to_linear_layer(rlhf_engine.critic)
        if args.enable_ema:
            rlhf_engine.actor_ema = convert_lora_to_linear_layer(rlhf_engine.actor_ema)

        if torch.distributed.get_rank() == 0:
            save_hf_format(rlhf_engine.actor, tokenizer, args, sub_folder="actor")
            save_hf_format(rlhf_engine.critic, tokenizer, args, sub_folder="critic")
            if args.enable_ema:
                save_hf_format(rlhf_engine.actor_ema, tokenizer, args, sub_folder="actor_ema")

        if args.actor_zero_stage == 3:
            save_zero_three_model(rlhf_engine.actor, global_rank=args.global_rank, save_dir=os.path.join(args.output_dir, "actor"), zero_stage=args.actor_zero_stage)
            if args.enable_ema:
                save_zero_three_model(rlhf_engine.actor_ema, global_rank=args.global_rank, save_dir=os.path.join(args.output_dir, "actor_ema"), zero_stage=args.actor_zero_stage)
        if args.critic_zero_stage == 3:
            save_zero_three_model(rlhf_engine.critic, global_rank=args.global_rank, save_dir=os.path.join(args.output_dir, "critic"), zero_stage=args.critic_zero_stage)


if __name__ == "__main__":
    main()
