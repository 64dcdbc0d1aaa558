#!/usr/bin/env bash
# Single node, 8 GPUs.  For two nodes run this script on both machines with
# NODE_RANK=0 / NODE_RANK=1 and MASTER_ADDR pointing at node 0.
set -x

CONFIG=${1:-configs/ms1mv3_r50}
NODE_RANK=${NODE_RANK:-0}
NNODES=${NNODES:-1}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}
MASTER_PORT=${MASTER_PORT:-12584}

export OMP_NUM_THREADS=4
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=1

CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch \
    --nproc_per_node=8 --nnodes=${NNODES} --node_rank=${NODE_RANK} \
    --master_addr=${MASTER_ADDR} --master_port=${MASTER_PORT} \
    train.py ${CONFIG}

ps -ef | grep "train" | grep -v grep | awk '{print "kill -9 "$2}' | sh
