#!/usr/bin/env bash
# Train the Genie spatio-temporal MaskGIT world model on the 1X world-model dataset.
# Usage: bash train.sh [extra args forwarded to train.py]
set -euo pipefail

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
export WANDB_PROJECT=${WANDB_PROJECT:-genie}
export TOKENIZERS_PARALLELISM=false

echo "Launching on ${NUM_GPUS} GPUs"
accelerate launch --multi_gpu --num_processes "${NUM_GPUS}" --mixed_precision bf16 train.py \
    --genie_config genie/configs/magvit_n32_h8_d256.json \
    --output_dir data/genie_model \
    --train_data_dir data/train_v1.1 \
    --val_data_dir data/val_v1.1 \
    --max_eval_steps 10 \
    --eval_every_n_steps 1000 \
    --with_tracking --report_to wandb \
    "$@"
