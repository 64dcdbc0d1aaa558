#!/usr/bin/env bash
# Copyright (c) OpenMMLab. All rights reserved.
#
# Usage: bash tools/dist_train.sh ${CONFIG_FILE} ${GPU_NUM} [optional arguments]
# Multi-node: set NNODES, NODE_RANK and MASTER_ADDR on every node.

CONFIG=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}

# the cluster nodes have a docker bridge and an IB port; make NCCL bootstrap
# over the 10GbE interface that the nodes can all reach
if [ "$NNODES" -gt 1 ]; then
    export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-enp94s0f0}
fi

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
