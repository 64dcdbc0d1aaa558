#!/usr/bin/env bash
# Multi-GPU training on one node.
#   bash scripts/dist_train.sh <num_gpus> <config> [extra train.py args]
# e.g.
#   CUDA_VISIBLE_DEVICES=0,1,2,3 bash scripts/dist_train.sh 4 configs/kitti_odometry.yaml --amp

set -x

NGPUS=${1:-4}
CFG=${2:-configs/kitti_odometry.yaml}
PY_ARGS=${@:3}

PORT=${PORT:-29500}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}

# NCCL settings for our PCIe boxes (no InfiniBand)
export NCCL_DEBUG=INFO
export NCCL_IB_DISABLE=1
export NCCL_P2P_LEVEL=NVL
export NCCL_SOCKET_IFNAME=eth0

export OMP_NUM_THREADS=4
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128

LOG_DIR=log/pwclo_$(date +%Y%m%d_%H%M%S)
mkdir -p ${LOG_DIR}

torchrun \
    --nnodes=1 \
    --nproc_per_node=${NGPUS} \
    --master_port=${PORT} \
    train.py \
    --cfg ${CFG} \
    --log_dir ${LOG_DIR} \
    --sync_bn \
    ${PY_ARGS} 2>&1 | tee ${LOG_DIR}/train.log
