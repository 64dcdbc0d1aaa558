#!/usr/bin/env bash
# Multi-GPU training with torchrun, e.g.
#   GPUS=4 bash tools/dist_train.sh configs/qvhighlights/umt_base_va_200e_qvhighlights.py
set -e

CONFIG=$1
GPUS=${GPUS:-4}
PORT=${PORT:-29500}

export CUDA_VISIBLE_DEVICES=${DEVICES:-0,1,2,3}
export OMP_NUM_THREADS=1
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
torchrun \
    --nproc_per_node=$GPUS \
    --master_port=$PORT \
    $(dirname "$0")/launch.py \
    $CONFIG \
    --launcher torch \
    ${@:2}
