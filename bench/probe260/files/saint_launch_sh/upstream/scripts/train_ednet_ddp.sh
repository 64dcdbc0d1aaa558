#!/usr/bin/env bash
# SAINT+ on EdNet-KT1 with torchrun (single node, 4 x A100 by default).
#
#   bash scripts/train_ednet_ddp.sh                 # all 4 GPUs
#   GPUS=0,1 bash scripts/train_ednet_ddp.sh        # two GPUs
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/train_ednet_ddp.sh
set -euo pipefail

cd "$(dirname "$0")/.."

GPUS=${GPUS:-0,1,2,3}
NPROC=$(echo ${GPUS} | tr ',' '\n' | wc -l)
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29501}
CONFIG=${CONFIG:-configs/saint_ednet.yaml}

export CUDA_VISIBLE_DEVICES=${GPUS}
export OMP_NUM_THREADS=8
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=1
export NCCL_P2P_LEVEL=NVL
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_ASYNC_ERROR_HANDLING=1

echo "nodes=${NNODES} node_rank=${NODE_RANK} procs_per_node=${NPROC} config=${CONFIG}"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

LOG_DIR=logs/saint_$(date +%Y%m%d_%H%M%S)
mkdir -p ${LOG_DIR}
cp ${CONFIG} ${LOG_DIR}/

torchrun \
    --nnodes=${NNODES} \
    --node_rank=${NODE_RANK} \
    --nproc_per_node=${NPROC} \
    --master_addr=${MASTER_ADDR} \
    --master_port=${MASTER_PORT} \
    train_ddp.py --config ${CONFIG} 2>&1 | tee ${LOG_DIR}/train.log
