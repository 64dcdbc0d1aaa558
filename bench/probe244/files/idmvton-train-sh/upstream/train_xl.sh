#!/usr/bin/env bash
# Train IDM-VTON on VITON-HD with 4 GPUs (A100 80GB; batch 6 per GPU fits with gradient checkpointing + 8-bit Adam).
# Inference afterwards: bash inference.sh

export MODEL_NAME="diffusers/stable-diffusion-xl-1.0-inpainting-0.1"
export DATA_DIR="./data/zalando"
export OUTPUT_DIR="result"
export TORCH_CUDA_ARCH_LIST="8.0"
export NCCL_DEBUG=WARN

CUDA_VISIBLE_DEVICES=0,1,2,3 accelerate launch \
    --mixed_precision "fp16" \
    --num_processes 4 \
    --multi_gpu \
    train_xl.py \
    --pretrained_model_name_or_path $MODEL_NAME \
    --gradient_checkpointing \
    --use_8bit_adam \
    --enable_xformers_memory_efficient_attention \
    --allow_tf32 \
    --output_dir $OUTPUT_DIR \
    --train_batch_size 6 \
    --data_dir $DATA_DIR \
    --mixed_precision fp16

# single-GPU inference on the paired test split
CUDA_VISIBLE_DEVICES=0 accelerate launch inference.py \
    --width 768 --height 1024 --num_inference_steps 30 \
    --output_dir "result/paired" \
    --data_dir $DATA_DIR \
    --seed 42 \
    --test_batch_size 2 \
    --guidance_scale 2.0
