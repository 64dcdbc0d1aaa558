#!/usr/bin/env bash
# Multi-node launcher used on our 4 x 8-GPU (A100) cluster.
# Usage (on every node):
#   NNODES=4 NODE_RANK=<i> MASTER_ADDR=10.0.0.1 \
#       bash tools/dist_train_multinode.sh configs/dino/dino-4scale_r50_8xb2-12e_coco.py 8 [train.py args]
set -x

CONFIG=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-bond0}
export NCCL_P2P_LEVEL=NVL
export OMP_NUM_THREADS=4
export MKL_NUM_THREADS=4

WORK_DIR=${WORK_DIR:-"./work_dirs/$(basename ${CONFIG%.*})"}
mkdir -p ${WORK_DIR}

# record the GPU state next to the logs, handy when a node misbehaves
nvidia-smi --query-gpu=index,name,memory.used,utilization.gpu --format=csv > ${WORK_DIR}/gpu_state_node${NODE_RANK}.csv

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
torchrun \
    --nnodes=$NNODES \
    --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR \
    --nproc_per_node=$GPUS \
    --master_port=$PORT \
    $(dirname "$0")/train.py \
    $CONFIG \
    --work-dir ${WORK_DIR} \
    --launcher pytorch ${@:3}
