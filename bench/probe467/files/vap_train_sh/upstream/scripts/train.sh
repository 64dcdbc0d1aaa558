#!/bin/bash
# Train VAP on Switchboard + Fisher sliding-window splits.
# Usage: bash scripts/train.sh [NUM_GPUS]
set -e

NUM_GPUS=${1:-4}
GPU_IDS=$(seq -s, 0 $((NUM_GPUS - 1)))

export CUDA_VISIBLE_DEVICES=${GPU_IDS}
export OMP_NUM_THREADS=8
export WANDB_PROJECT=VAP

echo "Training on GPUs: ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=index,name,memory.total --format=csv

python vap/train.py \
  trainer.devices=${NUM_GPUS} \
  trainer.max_epochs=20 \
  datamodule.batch_size=10 \
  datamodule.num_workers=24 \
  model.transformer.num_layers=4 \
  "$@"
