#!/usr/bin/env bash
# NTED: DeepFashion 512x352, 8 x A100 (40GB).
# usage: bash scripts/train_fashion_512.sh <experiment_name> [nproc]
set -euo pipefail

NAME=${1:-fashion_512}
NGPUS=${2:-8}
PORT=${PORT:-12345}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4

python -m torch.distributed.launch \
    --nproc_per_node=${NGPUS} \
    --master_port ${PORT} \
    train.py \
    --config ./config/fashion_512.yaml \
    --name ${NAME}
