#!/usr/bin/env bash
# ATST-SED: stage 1 (frozen ATST-Frame) then stage 2 (fine-tune everything).
# Usage: bash scripts/train.sh [gpu_ids]   e.g. bash scripts/train.sh 0,1
set -e

GPUS=${1:-"0,1"}
export CUDA_VISIBLE_DEVICES=$GPUS
export OMP_NUM_THREADS=4

# Lightning numbers the *visible* devices from 0
NGPU=$(echo $GPUS | tr ',' '\n' | grep -c .)
DEVICES=$(seq -s, 0 $((NGPU-1))),

mkdir -p exp/stage1 exp/stage2

echo "[stage 1] training on GPUs: $GPUS"
python train_stage1.py --gpus $DEVICES --conf_file confs/stage1.yaml --log_dir exp/stage1

echo "[stage 2] fine-tuning ATST-Frame + CRNN"
python train_stage2.py --gpus $DEVICES --conf_file confs/stage2.yaml --log_dir exp/stage2

nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv
