#!/usr/bin/env bash
# Multi-GPU fine-tuning of TrOCR-base on IAM lines (4 x A100 40GB).
# Usage: bash scripts/train_ddp.sh [extra args for train.py]
set -euo pipefail

cd "$(dirname "$0")/.."

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-4,5,6,7}
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=8
NGPU=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

RUN=runs/trocr-base-iam-$(date +%Y%m%d-%H%M)
mkdir -p "$RUN"

torchrun --standalone --nproc_per_node="$NGPU" train.py \
    --distributed \
    --model_name microsoft/trocr-base-stage1 \
    --data_dir data/IAM \
    --output_dir "$RUN" \
    --epochs 20 \
    --batch_size 12 \
    --lr 3e-5 \
    --fp16 \
    "$@" 2>&1 | tee "$RUN/train.log"
