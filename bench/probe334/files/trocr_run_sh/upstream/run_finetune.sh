#!/bin/bash
# Fine-tune TrOCR-base on IAM lines with 4 GPUs (DDP through torchrun).
#
#   bash run_finetune.sh                 # all 4 cards
#   GPUS=0,1 NPROC=2 bash run_finetune.sh
set -euo pipefail

GPUS=${GPUS:-0,1,2,3}
NPROC=${NPROC:-4}
MASTER_PORT=${MASTER_PORT:-29501}
OUT=${OUT:-runs/trocr-base-iam-$(date +%Y%m%d_%H%M)}

export CUDA_VISIBLE_DEVICES=$GPUS
export NCCL_DEBUG=WARN
# the lab's 4x RTX 3090 box has no NVLink; P2P over PCIe hangs with some drivers
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4
export TOKENIZERS_PARALLELISM=false

mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv | tee "$OUT/gpus.csv"

torchrun --standalone --nproc_per_node="$NPROC" --master_port="$MASTER_PORT" \
    train_trocr_iam.py \
    --mode trainer \
    --data_dir data/IAM \
    --output_dir "$OUT" \
    --model_name microsoft/trocr-base-stage1 \
    --batch_size 16 \
    --grad_accum 2 \
    --epochs 20 \
    --lr 5e-5 \
    --num_workers 6 \
    --fp16 2>&1 | tee "$OUT/train.log"

# Evaluate the best checkpoint on the test split, single GPU
CUDA_VISIBLE_DEVICES=${GPUS%%,*} python inference.py \
    --model "$OUT" \
    --images "data/IAM/test/*.png" \
    --batch_size 32 --half \
    --out "$OUT/test_predictions.tsv"
