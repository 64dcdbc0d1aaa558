#!/usr/bin/env bash
# Multi-node DDP launch for TimingGNN.
#   node 0: NODE_RANK=0 MASTER_ADDR=10.0.0.11 bash scripts/launch_ddp.sh
#   node 1: NODE_RANK=1 MASTER_ADDR=10.0.0.11 bash scripts/launch_ddp.sh
set -euo pipefail

NNODES=${NNODES:-2}
NODE_RANK=${NODE_RANK:-0}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29511}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5
export OMP_NUM_THREADS=4

DATA=${DATA:-data/timing_ng45}
OUT=${OUT:-checkpoints/timing_gnn_${NNODES}n}

torchrun \
    --nnodes ${NNODES} \
    --node_rank ${NODE_RANK} \
    --nproc_per_node ${GPUS_PER_NODE} \
    --master_addr ${MASTER_ADDR} \
    --master_port ${MASTER_PORT} \
    train_ddp.py \
    --data ${DATA} \
    --out ${OUT} \
    --epochs 300 \
    --bf16 "$@"
