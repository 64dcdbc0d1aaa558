#!/bin/bash
# Multi-node ControlNet-SDXL training (8 GPUs per node), launched once per node, e.g. from a SLURM array:
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.11 bash run_controlnet_sdxl_multinode.sh
set -euo pipefail

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
GPUS_PER_NODE=8

export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=0
export NCCL_P2P_LEVEL=NVL
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=8
export WANDB_PROJECT=controlnet-sdxl

MODEL_DIR="stabilityai/stable-diffusion-xl-base-1.0"
VAE_DIR="madebyollin/sdxl-vae-fp16-fix"
OUTPUT_DIR="runs/controlnet-sdxl-canny"

accelerate launch \
  --config_file ../accelerate_configs/multi_gpu.yaml \
  --multi_gpu \
  --num_machines "$NNODES" \
  --num_processes $((NNODES * GPUS_PER_NODE)) \
  --machine_rank "$NODE_RANK" \
  --main_process_ip "$MASTER_ADDR" \
  --main_process_port "$MASTER_PORT" \
  train_controlnet_sdxl.py \
  --pretrained_model_name_or_path=$MODEL_DIR \
  --pretrained_vae_model_name_or_path=$VAE_DIR \
  --output_dir=$OUTPUT_DIR \
  --dataset_name=multimodalart/facesyntheticsspigacaptioned \
  --conditioning_image_column=spiga_seg \
  --image_column=image \
  --caption_column=image_caption \
  --resolution=1024 \
  --learning_rate=1e-5 \
  --max_train_steps=15000 \
  --validation_image "./face_landmarks1.jpeg" "./face_landmarks2.jpeg" \
  --validation_prompt "a woman smiling" "a man with a beard" \
  --validation_steps=500 \
  --train_batch_size=2 \
  --gradient_accumulation_steps=2 \
  --gradient_checkpointing \
  --mixed_precision="bf16" \
  --allow_tf32 \
  --set_grads_to_none \
  --report_to=wandb \
  --seed=42
