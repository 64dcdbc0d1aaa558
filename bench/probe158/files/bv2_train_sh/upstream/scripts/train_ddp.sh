#!/usr/bin/env bash
# Single-node multi-GPU launcher for train_ms.py (torchrun replaces mp.spawn).
# Usage: bash scripts/train_ddp.sh <config.json> <dataset_dir> [num_gpus]
set -e

CONFIG=${1:-"Data/mydata/config.json"}
DATASET_DIR=${2:-"Data/mydata"}
NUM_GPUS=${3:-4}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_P2P_DISABLE=1          # consumer cards without NVLink hang on P2P
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4
export PYTHONPATH=$(pwd):$PYTHONPATH

MASTER_PORT=${MASTER_PORT:-10086}

nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

echo "[train] config=${CONFIG} dataset=${DATASET_DIR} gpus=${CUDA_VISIBLE_DEVICES}"

torchrun \
    --nnodes=1 \
    --nproc_per_node=${NUM_GPUS} \
    --master_port=${MASTER_PORT} \
    train_ms.py -c "${CONFIG}" -m "${DATASET_DIR}"
