#!/usr/bin/env bash
# Distil-Whisper large-v3: 2-layer decoder student distilled from whisper-large-v3.
# Single node, 8x H100 80GB. Expect ~28h for 80k steps.

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_SOCKET_IFNAME=eth0
export NCCL_ASYNC_ERROR_HANDLING=1
export HF_DATASETS_CACHE=/mnt/data/hf_cache
export WANDB_PROJECT=distil-whisper-large-v3

pip list 2>/dev/null | grep -E "^(torch|flash-attn|transformers|accelerate) " || true

accelerate launch \
  --multi_gpu \
  --num_processes 8 \
  --num_machines 1 \
  --mixed_precision bf16 \
  --dynamo_backend no \
  run_distillation.py \
  --model_name_or_path "./distil-large-v3-init" \
  --teacher_model_name_or_path "openai/whisper-large-v3" \
  --train_dataset_name "distil-whisper/librispeech_asr+distil-whisper/common_voice_13_0+distil-whisper/voxpopuli+distil-whisper/gigaspeech-l" \
  --train_dataset_config_name "all+en+en+l" \
  --train_split_name "train.clean.100+train.clean.360+train.other.500+train+validation+train+train" \
  --train_dataset_samples "2.9+10.4+14.9+226.6+587.3" \
  --eval_dataset_name "distil-whisper/gigaspeech-l" \
  --eval_dataset_config_name "l" \
  --eval_split_name "validation" \
  --eval_text_column_name "text" \
  --eval_steps 5000 \
  --save_steps 5000 \
  --warmup_steps 500 \
  --learning_rate 0.0001 \
  --lr_scheduler_type "constant_with_warmup" \
  --timestamp_probability 0.2 \
  --condition_on_prev_probability 0.2 \
  --language "en" \
  --task "transcribe" \
  --logging_steps 25 \
  --save_total_limit 1 \
  --max_steps 80000 \
  --wer_threshold 20 \
  --per_device_train_batch_size 64 \
  --per_device_eval_batch_size 64 \
  --dataloader_num_workers 16 \
  --preprocessing_num_workers 16 \
  --ddp_timeout 7200 \
  --dtype "bfloat16" \
  --attn_implementation "flash_attention_2" \
  --output_dir "./" \
  --do_train \
  --do_eval \
  --gradient_checkpointing \
  --overwrite_output_dir \
  --predict_with_generate \
  --freeze_encoder \
  --freeze_embed_positions \
  --streaming False \
  --push_to_hub
