#!/usr/bin/env bash
# DreamBooth-LoRA fine-tuning of SDXL on a single 24GB GPU (RTX 4090 / A10G / L4).
# Usage: GPU_ID=1 bash launch_sdxl_lora.sh
set -ex

export CUDA_VISIBLE_DEVICES=${GPU_ID:-0}
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export HF_HUB_ENABLE_HF_TRANSFER=1

export MODEL_NAME="stabilityai/stable-diffusion-xl-base-1.0"
export VAE_PATH="madebyollin/sdxl-vae-fp16-fix"
export INSTANCE_DIR="dog"
export OUTPUT_DIR="lora-trained-xl"

# fp16 VAE fix above lets us keep --mixed_precision fp16 without NaNs in the VAE
accelerate launch --num_processes 1 train_dreambooth_lora_sdxl.py \
  --pretrained_model_name_or_path=$MODEL_NAME \
  --instance_data_dir=$INSTANCE_DIR \
  --pretrained_vae_model_name_or_path=$VAE_PATH \
  --output_dir=$OUTPUT_DIR \
  --mixed_precision="fp16" \
  --instance_prompt="a photo of sks dog" \
  --resolution=1024 \
  --train_batch_size=1 \
  --gradient_accumulation_steps=4 \
  --gradient_checkpointing \
  --enable_xformers_memory_efficient_attention \
  --use_8bit_adam \
  --learning_rate=1e-4 \
  --snr_gamma=5.0 \
  --lr_scheduler="constant" \
  --lr_warmup_steps=0 \
  --max_train_steps=500 \
  --validation_prompt="A photo of sks dog in a bucket" \
  --validation_epochs=25 \
  --seed="0" \
  --report_to="tensorboard"

nvidia-smi --query-gpu=memory.used,memory.total --format=csv
