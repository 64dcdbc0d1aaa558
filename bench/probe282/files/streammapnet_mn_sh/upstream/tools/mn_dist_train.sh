#!/usr/bin/env bash
# Multi-node training launcher (we trained the 100x50 newsplit models on 2 nodes x 8 A100).
# usage, on every node:
#   NNODES=2 NODE_RANK=<0|1> MASTER_ADDR=<ip of node 0> \
#   bash tools/mn_dist_train.sh plugin/configs/nusc_newsplit_480_100x50_24e.py 8 [--work-dir ...]

set -x

CONFIG=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}

# interconnect: InfiniBand between nodes, eth0 for the bootstrap
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export OMP_NUM_THREADS=4

echo "node ${NODE_RANK}/${NNODES}: ${GPUS} GPUs, master ${MASTER_ADDR}:${PORT}"
nvidia-smi --query-gpu=index,name,memory.used --format=csv

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
python -m torch.distributed.launch \
    --nnodes=$NNODES \
    --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR \
    --nproc_per_node=$GPUS \
    --master_port=$PORT \
    $(dirname "$0")/train.py \
    $CONFIG \
    --launcher pytorch ${@:3}
