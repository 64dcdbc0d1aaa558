#!/usr/bin/env bash
# Single-node / multi-node launcher for train_pangu_ddp.py
#
#   bash scripts/train_pangu.sh                 # 8 GPUs on this node
#   NNODES=4 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/train_pangu.sh
set -euo pipefail

LEAD=${LEAD:-24}
DATA_ROOT=${DATA_ROOT:-/mnt/era5/0.25deg}
OUT_DIR=${OUT_DIR:-./runs/pangu_${LEAD}h}

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29522}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NGPUS=$(echo "${CUDA_VISIBLE_DEVICES}" | tr ',' '\n' | wc -l)

# NCCL tuning for our 4x200Gb/s InfiniBand nodes
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_GID_INDEX=3
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=8
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

mkdir -p "${OUT_DIR}"
nvidia-smi --query-gpu=index,name,memory.total --format=csv | tee "${OUT_DIR}/gpus.csv"

torchrun \
    --nnodes="${NNODES}" \
    --node_rank="${NODE_RANK}" \
    --nproc_per_node="${NGPUS}" \
    --master_addr="${MASTER_ADDR}" \
    --master_port="${MASTER_PORT}" \
    train_pangu_ddp.py \
        --data_root "${DATA_ROOT}" \
        --out_dir "${OUT_DIR}" \
        --lead "${LEAD}" \
        --batch_size 1 \
        --amp \
        --checkpoint_activations \
        --dist_backend nccl \
        2>&1 | tee "${OUT_DIR}/train_node${NODE_RANK}.log"
