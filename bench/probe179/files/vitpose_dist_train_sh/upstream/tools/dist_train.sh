#!/usr/bin/env bash
# Copyright (c) OpenMMLab. All rights reserved.
#
# Usage:
#   bash tools/dist_train.sh ${CONFIG_FILE} ${GPU_NUM} [optional arguments]
#   CUDA_VISIBLE_DEVICES=4,5,6,7 PORT=29501 bash tools/dist_train.sh ${CONFIG_FILE} 4
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.1.1.1 bash tools/dist_train.sh ${CONFIG_FILE} 8

CONFIG=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}

# default to all 8 cards of a DGX node unless the caller restricts them
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
# our cluster has no InfiniBand between the A100 nodes; use the bonded eth
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-bond0}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
python -m torch.distributed.launch \
    --nnodes=$NNODES \
    --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR \
    --nproc_per_node=$GPUS \
    --master_port=$PORT \
    $(dirname "$0")/train.py \
    $CONFIG \
    --seed 0 \
    --launcher pytorch ${@:3}
