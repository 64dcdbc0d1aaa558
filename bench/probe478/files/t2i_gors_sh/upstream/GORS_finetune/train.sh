#!/bin/bash
# GORS: LoRA fine-tuning of SD-2 on reward-selected samples.
# Step 1 (not shown): generate samples and score them with BLIP-VQA / UniDet / CLIPScore,
# write ${TRAIN_DIR}/metadata.jsonl with {"file_name", "text", "reward"}.

export MODEL_NAME="stabilityai/stable-diffusion-2-base"
export TRAIN_DIR="examples/gors_color"
export OUTPUT_DIR="checkpoint/color"
export CUDA_VISIBLE_DEVICES=0,1,2,3
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512

accelerate launch --multi_gpu --num_processes=4 --mixed_precision="fp16" train_text_to_image.py \
  --pretrained_model_name_or_path=$MODEL_NAME \
  --train_data_dir=$TRAIN_DIR \
  --caption_column="text" \
  --reward_column="reward" \
  --resolution=512 --random_flip \
  --train_batch_size=5 \
  --num_train_epochs=100 --checkpointing_steps=5000 \
  --learning_rate=1e-05 \
  --lr_scheduler="constant" --lr_warmup_steps=0 \
  --seed=42 \
  --rank=4 \
  --output_dir=$OUTPUT_DIR \
  --validation_prompt="a green bench and a red car" \
  --report_to="tensorboard"
