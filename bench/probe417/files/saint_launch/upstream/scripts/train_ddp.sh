#!/usr/bin/env bash
# 4x V100 node; one process per GPU.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4

NGPU=$(echo ${CUDA_VISIBLE_DEVICES} | tr ',' '\n' | wc -l)
DATA=${DATA:-data/groups.pkl}
OUT=${OUT:-checkpoints/saint_plus_$(date +%m%d_%H%M)}
mkdir -p "${OUT}"

nvidia-smi --query-gpu=index,name,memory.total --format=csv

torchrun --standalone --nproc_per_node=${NGPU} train.py \
    --data "${DATA}" \
    --out "${OUT}" \
    --batch_size 256 \
    --epochs 30 \
    --lr 1e-3 \
    --warmup 4000 \
    --amp \
    2>&1 | tee "${OUT}/train.log"
