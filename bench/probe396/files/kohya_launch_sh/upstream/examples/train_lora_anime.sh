#!/usr/bin/env bash
# LoRA fine-tune of an anime base model (NAI-style tags, aspect-ratio buckets).
# Tested on a single 24GB GPU; lower --train_batch_size for 12GB cards.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=0
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512

MODEL=models/animefull-final-pruned.safetensors
DATASET_CONFIG=config/dataset_anime.toml
OUT=output/anime_style_lora

accelerate launch --num_cpu_threads_per_process 1 train_network.py \
  --pretrained_model_name_or_path="${MODEL}" \
  --dataset_config="${DATASET_CONFIG}" \
  --output_dir="${OUT}" \
  --output_name="anime_style_lora" \
  --save_model_as=safetensors \
  --prior_loss_weight=1.0 \
  --max_train_epochs=10 \
  --learning_rate=1e-4 \
  --unet_lr=1e-4 \
  --text_encoder_lr=5e-5 \
  --optimizer_type="AdamW8bit" \
  --lr_scheduler="cosine_with_restarts" \
  --xformers \
  --mixed_precision="fp16" \
  --save_precision="fp16" \
  --cache_latents \
  --gradient_checkpointing \
  --clip_skip=2 \
  --network_module=networks.lora \
  --network_dim=32 \
  --network_alpha=16 \
  --max_data_loader_n_workers=4 \
  --persistent_data_loader_workers \
  --seed=42 \
  --logging_dir=logs \
  --log_memory_usage
