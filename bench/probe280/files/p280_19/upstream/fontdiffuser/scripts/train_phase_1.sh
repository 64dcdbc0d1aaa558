#!/usr/bin/env bash
# Phase 1 of FontDiffuser: train the UNet, style encoder and content encoder (no SCR).
# Tested on 4x A100-80G with fp16; lower --train_batch_size on 24G cards.

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=INFO
export TORCH_CUDNN_V8_API_ENABLED=1

accelerate launch --multi_gpu --num_processes 4 --mixed_precision fp16 --main_process_port 29511 \
    train.py \
    --seed=123 \
    --experience_name="FontDiffuser_training_phase_1" \
    --data_root="data_examples" \
    --output_dir="outputs/FontDiffuser" \
    --report_to="tensorboard" \
    --resolution=96 \
    --style_image_size=96 \
    --content_image_size=96 \
    --content_encoder_downsample_size=3 \
    --channel_attn=True \
    --content_start_channel=64 \
    --style_start_channel=64 \
    --train_batch_size=16 \
    --perceptual_coefficient=0.01 \
    --offset_coefficient=0.5 \
    --max_train_steps=440000 \
    --ckpt_interval=40000 \
    --gradient_accumulation_steps=1 \
    --log_interval=50 \
    --learning_rate=1e-4 \
    --lr_scheduler="linear" \
    --lr_warmup_steps=10000 \
    --drop_prob=0.1 \
    --mixed_precision="fp16" \
    --allow_tf32 \
    --enable_xformers_memory_efficient_attention
