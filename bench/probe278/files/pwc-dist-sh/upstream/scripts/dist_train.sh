#!/usr/bin/env bash
# Multi-GPU / multi-node launcher for train_ddp.py
#
#   single node, 8 GPUs:   bash scripts/dist_train.sh config_train.yaml 8
#   two nodes:             NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/dist_train.sh config_train.yaml 8
#                          NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash scripts/dist_train.sh config_train.yaml 8

set -euo pipefail

CONFIG=${1:-config_train.yaml}
GPUS=${2:-8}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export OMP_NUM_THREADS=4

# NCCL tuning for our 2x100G RoCE cluster
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5_0,mlx5_1
export NCCL_IB_GID_INDEX=3
export NCCL_ASYNC_ERROR_HANDLING=1
export GLOO_SOCKET_IFNAME=eth0

export DIST_BACKEND=nccl

echo "[$(hostname)] node ${NODE_RANK}/${NNODES}, ${GPUS} GPUs, master ${MASTER_ADDR}:${MASTER_PORT}"
nvidia-smi -L

PYTHONPATH="$(dirname "$0")/..":${PYTHONPATH:-} \
torchrun \
    --nnodes=${NNODES} \
    --node_rank=${NODE_RANK} \
    --nproc_per_node=${GPUS} \
    --master_addr=${MASTER_ADDR} \
    --master_port=${MASTER_PORT} \
    train_ddp.py ${CONFIG} 2>&1 | tee -a logs/train_ddp_node${NODE_RANK}.log
