#!/usr/bin/env bash
# LCM-LoRA distillation for SDXL (examples/consistency_distillation/train_lcm_distill_lora_sdxl.py).
# Tested on 8x A100 80GB; with --use_8bit_adam + gradient checkpointing it also fits a single 24GB card at bs=4.
set -euo pipefail

export MODEL_NAME="stabilityai/stable-diffusion-xl-base-1.0"
export VAE_PATH="madebyollin/sdxl-vae-fp16-fix"
export OUTPUT_DIR="${OUTPUT_DIR:-lcm-lora-sdxl}"
export DATASET="lambdalabs/naruto-blip-captions"

# pick GPUs, e.g. GPUS=0,1,2,3 bash launch_lcm_lora_sdxl.sh
export CUDA_VISIBLE_DEVICES="${GPUS:-0,1,2,3,4,5,6,7}"
NUM_PROCS=$(echo "${CUDA_VISIBLE_DEVICES}" | tr ',' '\n' | wc -l)

# NCCL over NVLink inside one node; disable IB on cloud VMs without it
export NCCL_P2P_LEVEL=NVL
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN

accelerate launch --multi_gpu --num_processes "${NUM_PROCS}" --mixed_precision="fp16" \
  train_lcm_distill_lora_sdxl.py \
  --pretrained_teacher_model="${MODEL_NAME}" \
  --pretrained_vae_model_name_or_path="${VAE_PATH}" \
  --output_dir="${OUTPUT_DIR}" \
  --dataset_name="${DATASET}" \
  --resolution=1024 \
  --lora_rank=64 \
  --learning_rate=1e-6 --loss_type="huber" --adam_weight_decay=0.0 \
  --max_train_steps=1000 \
  --max_train_samples=4000000 \
  --dataloader_num_workers=8 \
  --checkpointing_steps=200 --checkpoints_total_limit=10 \
  --train_batch_size=12 \
  --gradient_checkpointing \
  --enable_xformers_memory_efficient_attention \
  --use_8bit_adam \
  --gradient_accumulation_steps=1 \
  --resume_from_checkpoint=latest \
  --report_to=wandb \
  --seed=453645634 \
  --push_to_hub
