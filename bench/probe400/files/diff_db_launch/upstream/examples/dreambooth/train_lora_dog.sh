#!/usr/bin/env bash
# DreamBooth-LoRA on the "dog" example set (see README.md, section "Training with LoRA").
# Tested on a single 16GB card with 8-bit Adam + xformers; drop both flags on a 24GB+ card.
set -euo pipefail

export MODEL_NAME="runwayml/stable-diffusion-v1-5"
export INSTANCE_DIR="dog"
export CLASS_DIR="class-dog"
export OUTPUT_DIR="path-to-save-lora"

# pick the GPU; accelerate reads the rest from ~/.cache/huggingface/accelerate/default_config.yaml
export CUDA_VISIBLE_DEVICES=0

if [ ! -d "$INSTANCE_DIR" ]; then
  python -c "from huggingface_hub import snapshot_download; snapshot_download('diffusers/dog-example', local_dir='$INSTANCE_DIR', repo_type='dataset', ignore_patterns='.gitattributes')"
fi

nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv

accelerate launch train_dreambooth_lora.py \
  --pretrained_model_name_or_path=$MODEL_NAME  \
  --instance_data_dir=$INSTANCE_DIR \
  --class_data_dir=$CLASS_DIR \
  --output_dir=$OUTPUT_DIR \
  --with_prior_preservation --prior_loss_weight=1.0 \
  --instance_prompt="a photo of sks dog" \
  --class_prompt="a photo of dog" \
  --resolution=512 \
  --train_batch_size=1 \
  --gradient_accumulation_steps=1 \
  --checkpointing_steps=100 \
  --learning_rate=1e-4 \
  --report_to="tensorboard" \
  --lr_scheduler="constant" \
  --lr_warmup_steps=0 \
  --max_train_steps=500 \
  --num_class_images=200 \
  --validation_prompt="A photo of sks dog in a bucket" \
  --validation_epochs=50 \
  --mixed_precision="fp16" \
  --use_8bit_adam \
  --enable_xformers_memory_efficient_attention \
  --seed="0"
