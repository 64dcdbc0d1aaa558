#!/bin/bash
# IP-Adapter (SD 1.5) training, 8 GPUs on one node.
# Usage: bash train_ip_adapter.sh /path/to/data.json /path/to/images

DATA_JSON=${1:-"data.json"}
DATA_ROOT=${2:-"images"}

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=8

accelerate launch --num_processes 8 --multi_gpu --mixed_precision "fp16" \
  tutorial_train.py \
  --pretrained_model_name_or_path="runwayml/stable-diffusion-v1-5/" \
  --image_encoder_path="models/image_encoder/" \
  --data_json_file="$DATA_JSON" \
  --data_root_path="$DATA_ROOT" \
  --mixed_precision="fp16" \
  --resolution=512 \
  --train_batch_size=8 \
  --dataloader_num_workers=4 \
  --learning_rate=1e-04 \
  --weight_decay=0.01 \
  --output_dir="output_dir" \
  --save_steps=10000
