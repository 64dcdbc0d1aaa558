#!/bin/bash
# LCM-LoRA distillation of SDXL on 4 GPUs (second half of an 8x A100 80GB node).
# Usage: bash run_lcm_lora_sdxl.sh /path/to/laion_aesthetics_6plus

export MODEL_NAME="stabilityai/stable-diffusion-xl-base-1.0"
export VAE_PATH="madebyollin/sdxl-vae-fp16-fix"
export DATASET_DIR=${1:-/mnt/data/laion_6plus}
export OUTPUT_DIR="lcm-lora-sdxl-$(date +%m%d)"

export CUDA_VISIBLE_DEVICES=4,5,6,7
export NCCL_P2P_DISABLE=0
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_DISTRIBUTED_DEBUG=OFF

accelerate launch --config_file ../../configs/accelerate_multi_gpu.yaml \
  --mixed_precision="fp16" --num_processes 4 \
  train_lcm_distill_lora_sdxl.py \
  --pretrained_teacher_model=$MODEL_NAME \
  --pretrained_vae_model_name_or_path=$VAE_PATH \
  --train_data_dir=$DATASET_DIR \
  --output_dir=$OUTPUT_DIR \
  --mixed_precision=fp16 \
  --resolution=1024 \
  --lora_rank=64 \
  --learning_rate=1e-4 --loss_type="huber" --adam_weight_decay=0.0 \
  --max_train_steps=4000 \
  --max_train_samples=4000000 \
  --dataloader_num_workers=8 \
  --checkpointing_steps=1000 --checkpoints_total_limit=10 \
  --train_batch_size=12 \
  --gradient_checkpointing \
  --enable_xformers_memory_efficient_attention \
  --use_8bit_adam \
  --allow_tf32 \
  --validation_steps=500 \
  --seed=453645634 \
  --report_to=wandb
