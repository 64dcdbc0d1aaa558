#!/usr/bin/env bash
# Multi-GPU training of Ultra-Fast-Lane-Detection on CULane.
# Paper numbers were obtained on 4 x V100 (32 GB) with batch size 32 per GPU.
#
# usage: bash scripts/train_culane.sh [config] [log_path] [extra args...]
set -e

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NGPUS=4
export OMP_NUM_THREADS=4 # you can change this value according to your number of cpu cores

CFG=${1:-configs/culane.py}
LOG_PATH=${2:-./log}
shift 2 || true

mkdir -p "$LOG_PATH"

python -m torch.distributed.launch --nproc_per_node=$NGPUS train.py "$CFG" \
    --data_root ./data/CULane \
    --log_path "$LOG_PATH" "$@" 2>&1 | tee "$LOG_PATH/train_$(date +%Y%m%d_%H%M%S).log"
