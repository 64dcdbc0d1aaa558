#!/bin/bash
# Multi-node / multi-GPU launcher for train_ddp.py
#
# single node, 4 GPUs:
#   bash launch_ddp.sh /data/InsectSound
# two nodes (run on each node, NODE_RANK=0 on the master):
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash launch_ddp.sh /data/InsectSound
set -e

DATA_DIR=${1:-/data/InsectSound}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
GPUS_PER_NODE=${GPUS_PER_NODE:-4}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export OMP_NUM_THREADS=4

# NCCL settings for our cluster (no InfiniBand between the nodes, 25GbE only)
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0
export NCCL_P2P_LEVEL=NVL

echo "nodes=${NNODES} node_rank=${NODE_RANK} gpus/node=${GPUS_PER_NODE} master=${MASTER_ADDR}:${MASTER_PORT}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

torchrun \
  --nnodes=${NNODES} \
  --node_rank=${NODE_RANK} \
  --nproc_per_node=${GPUS_PER_NODE} \
  --master_addr=${MASTER_ADDR} \
  --master_port=${MASTER_PORT} \
  train_ddp.py \
    --data_dir ${DATA_DIR} \
    --epochs 60 \
    --batch_size 256 \
    --lr 2e-3 \
    --amp \
    --sync_bn \
    --out_dir ./checkpoints/resnet1d_$(date +%Y%m%d_%H%M) \
  2>&1 | tee train_node${NODE_RANK}.log
