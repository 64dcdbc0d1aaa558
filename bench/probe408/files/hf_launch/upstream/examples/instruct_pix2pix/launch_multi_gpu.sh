#!/usr/bin/env bash
# Multi-GPU fine-tuning of InstructPix2Pix with 🤗 Accelerate.
# Mirrors the "Multi-GPU training" section of README.md; tested on 4x A100 80GB.
#
#   bash launch_multi_gpu.sh [extra args passed to train_instruct_pix2pix.py]

export MODEL_NAME="runwayml/stable-diffusion-v1-5"
export DATASET_ID="fusing/instructpix2pix-1000-samples"
export OUTPUT_DIR=${OUTPUT_DIR:-"instruct-pix2pix-model"}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
NUM_PROCESSES=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)

export WANDB_PROJECT=${WANDB_PROJECT:-instruct-pix2pix}

accelerate launch --mixed_precision="fp16" --multi_gpu --num_processes=$NUM_PROCESSES \
  --config_file accelerate_config.yaml \
  train_instruct_pix2pix.py \
  --pretrained_model_name_or_path=$MODEL_NAME \
  --dataset_name=$DATASET_ID \
  --use_ema \
  --enable_xformers_memory_efficient_attention \
  --resolution=512 --random_flip \
  --train_batch_size=4 --gradient_accumulation_steps=4 --gradient_checkpointing \
  --max_train_steps=15000 \
  --checkpointing_steps=5000 --checkpoints_total_limit=1 \
  --learning_rate=5e-05 --lr_warmup_steps=0 \
  --conditioning_dropout_prob=0.05 \
  --mixed_precision=fp16 \
  --val_image_url="https://hf.co/datasets/diffusers/diffusers-images-docs/resolve/main/mountain.png" \
  --validation_prompt="make the mountains snowy" \
  --seed=42 \
  --report_to=wandb \
  --output_dir="$OUTPUT_DIR" \
  "$@"
