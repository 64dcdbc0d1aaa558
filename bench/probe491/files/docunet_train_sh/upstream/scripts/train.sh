#!/usr/bin/env bash
# Train DocUNet on two cards.
#   bash scripts/train.sh [config] [gpu ids]
set -e

CONFIG=${1:-configs/docunet.yaml}
GPUS=${2:-0,1}

cd "$(dirname "$0")/.."
mkdir -p logs

# print the cards we are about to use
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

python train.py \
    --config "${CONFIG}" \
    --gpu_ids "${GPUS}" \
    --workers 8 \
    --log_dir runs/docunet_$(date +%m%d_%H%M) \
    2>&1 | tee logs/train_$(date +%m%d_%H%M).log
