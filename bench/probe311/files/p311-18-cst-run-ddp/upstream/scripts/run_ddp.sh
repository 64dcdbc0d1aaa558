#!/usr/bin/env bash
# Multi-GPU / multi-node training of the CST-former SELD model.
#
# single node, 4 GPUs:
#   bash scripts/run_ddp.sh configs/cst_former_mic.yaml 4
# two nodes (run on each node, NODE_RANK=0 on the master):
#   MASTER_ADDR=10.0.0.1 NNODES=2 NODE_RANK=1 bash scripts/run_ddp.sh configs/cst_former_mic.yaml 8
set -euo pipefail

CONFIG=${1:-configs/cst_former_mic.yaml}
GPUS_PER_NODE=${2:-4}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29501}
EXP_NAME=${EXP_NAME:-cst_former_$(date +%m%d_%H%M)}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((GPUS_PER_NODE - 1)))}
export OMP_NUM_THREADS=8

# NCCL settings that worked on our cluster (25GbE, no InfiniBand)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_P2P_LEVEL=NVL
export TORCH_NCCL_BLOCKING_WAIT=1

mkdir -p exp/${EXP_NAME}
cp ${CONFIG} exp/${EXP_NAME}/

echo "[$(hostname)] node ${NODE_RANK}/${NNODES}, ${GPUS_PER_NODE} GPUs, devices=${CUDA_VISIBLE_DEVICES}"

torchrun \
    --nnodes=${NNODES} \
    --node_rank=${NODE_RANK} \
    --nproc_per_node=${GPUS_PER_NODE} \
    --master_addr=${MASTER_ADDR} \
    --master_port=${MASTER_PORT} \
    train_ddp.py \
        --config ${CONFIG} \
        --out_dir exp/${EXP_NAME} \
        --amp --compile \
    2>&1 | tee exp/${EXP_NAME}/train_node${NODE_RANK}.log
