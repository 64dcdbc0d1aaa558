#!/usr/bin/env bash
# Pre-train a wav2vec2-base model on LibriSpeech 960h with 🤗 Accelerate on one
# 8 x A100 node (see README.md, "Base" section). Takes ~4 days for 200k steps.
#
# The training script is fully device agnostic: everything device related is
# handled by `accelerate launch` (number of processes, mixed precision, DDP).

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export WANDB_PROJECT=wav2vec2-pretraining

accelerate launch --multi_gpu --num_processes 8 --mixed_precision fp16 \
  run_wav2vec2_pretraining_no_trainer.py \
  --dataset_name="librispeech_asr" \
  --dataset_config_names clean clean other \
  --dataset_split_names train.100 train.360 train.500 \
  --model_name_or_path="patrickvonplaten/wav2vec2-base-v2" \
  --output_dir="./wav2vec2-pretrained-demo" \
  --max_train_steps="200000" \
  --num_warmup_steps="32000" \
  --gradient_accumulation_steps="4" \
  --learning_rate="0.001" \
  --weight_decay="0.01" \
  --max_duration_in_seconds="20.0" \
  --min_duration_in_seconds="2.0" \
  --logging_steps="1" \
  --saving_steps="10000" \
  --per_device_train_batch_size="8" \
  --per_device_eval_batch_size="8" \
  --adam_beta1="0.9" \
  --adam_beta2="0.98" \
  --adam_epsilon="1e-06" \
  --gradient_checkpointing \
  --mask_time_prob="0.65" \
  --mask_time_length="10"
