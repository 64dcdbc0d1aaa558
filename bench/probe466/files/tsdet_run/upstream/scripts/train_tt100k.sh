#!/usr/bin/env bash
# Faster R-CNN R50-FPN on TT100K-2021 (45 sign classes + background).
# Usage: GPUS=0,1,2,3 bash scripts/train_tt100k.sh [extra train.py args]
set -e

cd "$(dirname "$0")/.."

export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3}
NGPU=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)

export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4

DATA=${DATA:-/data/tt100k_2021}
OUT=${OUT:-./output/frcnn_r50_tt100k}
mkdir -p "$OUT"

# record which cards we got, handy when the shared box is busy
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv | tee "$OUT/gpus.csv"

# lr scaled from 0.02 @ 16 imgs; we use 4 imgs per card
LR=$(python -c "print(0.02 / 16 * 4 * $NGPU)")

torchrun --nproc_per_node="$NGPU" --master_port=${PORT:-29500} train.py \
    --data-path "$DATA" --dataset tt100k \
    --model fasterrcnn_resnet50_fpn --epochs 26 \
    --lr-steps 16 22 --aspect-ratio-group-factor 3 \
    --min-size 1024 --lr "$LR" -b 4 --amp \
    --output-dir "$OUT" "$@" 2>&1 | tee "$OUT/train.log"
