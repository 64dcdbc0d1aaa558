#!/usr/bin/env bash
# Multi-GPU / multi-node launcher for tools/train_net.py
#
#   bash scripts/dist_train.sh configs/ucf_crime_i3d.yaml 8 --output run1
#   NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash scripts/dist_train.sh configs/xd_clip.yaml 8

CONFIG=$1
GPUS=${2:-8}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}

# restrict to a subset of the cards if requested, e.g. DEVICES=0,1,2,3
if [ -n "${DEVICES}" ]; then
    export CUDA_VISIBLE_DEVICES=${DEVICES}
fi

# NCCL settings for our cluster (no InfiniBand between the 8xV100 nodes)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0
export NCCL_P2P_LEVEL=NVL
export OMP_NUM_THREADS=4
export TORCH_DISTRIBUTED_DEBUG=${TORCH_DISTRIBUTED_DEBUG:-OFF}

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
torchrun \
    --nnodes=${NNODES} \
    --node_rank=${NODE_RANK} \
    --nproc_per_node=${GPUS} \
    --master_addr=${MASTER_ADDR} \
    --master_port=${PORT} \
    $(dirname "$0")/../tools/train_net.py \
    ${CONFIG} \
    ${@:3}
