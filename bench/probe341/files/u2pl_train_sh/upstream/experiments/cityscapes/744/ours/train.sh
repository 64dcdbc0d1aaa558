#!/bin/bash
# Two-node launcher for U2PL on Cityscapes (2 x 8 V100-32G).
# Run once per node:  sh train.sh <node_rank> <master_addr> [port]
now=$(date +"%Y%m%d_%H%M%S")
job='city_semi744'
ROOT=../../../..

NODE_RANK=${1:-0}
MASTER_ADDR=${2:-127.0.0.1}
PORT=${3:-29500}
NNODES=2
GPUS_PER_NODE=8

mkdir -p log

# ---- GPU / NCCL environment ----
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=1
export PYTHONPATH=$ROOT:$PYTHONPATH

python -m torch.distributed.launch \
    --nproc_per_node=$GPUS_PER_NODE \
    --nnodes=$NNODES \
    --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR \
    --master_port=$PORT \
    $ROOT/train_semi.py --config=config.yaml --seed 2 --port $PORT 2>&1 | tee log/seg_${job}_node${NODE_RANK}_$now.txt
