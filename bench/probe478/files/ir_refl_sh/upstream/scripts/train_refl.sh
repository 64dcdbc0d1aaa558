#!/bin/bash
# ReFL fine-tuning of Stable Diffusion v1.4 with ImageReward as the reward model.
# Tested on a single node with 8x A100 (80G).

export MODEL_NAME="CompVis/stable-diffusion-v1-4"
export DATASET="data/refl_data.json"

accelerate launch --multi_gpu --num_processes=8 --mixed_precision="fp16" scripts/refl.py \
  --pretrained_model_name_or_path=$MODEL_NAME \
  --dataset_name=$DATASET \
  --use_ema \
  --resolution=512 --center_crop --random_flip \
  --train_batch_size=2 \
  --gradient_accumulation_steps=4 \
  --gradient_checkpointing \
  --max_train_steps=100 \
  --learning_rate=1e-05 \
  --max_grad_norm=1 \
  --lr_scheduler="constant" --lr_warmup_steps=0 \
  --output_dir="checkpoint/refl" \
  --grad_scale 0.001 \
  --checkpointing_steps 100
