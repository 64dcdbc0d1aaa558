#!/bin/bash
# SEW-ResNet-50 (ADD) on ImageNet, 2 nodes x 8 V100-32GB, T=4, 320 epochs, global batch 512.
# Start the same script on both nodes:
#   node 0:  NODE_RANK=0 MASTER_ADDR=10.10.1.11 bash run_sew50_2nodes.sh
#   node 1:  NODE_RANK=1 MASTER_ADDR=10.10.1.11 bash run_sew50_2nodes.sh

set -x

# ---- NCCL / network ---------------------------------------------------------
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5_0,mlx5_1
export NCCL_DEBUG=INFO
export GLOO_SOCKET_IFNAME=ib0
export OMP_NUM_THREADS=4

# ---- job ---------------------------------------------------------------------
NNODES=2
GPUS_PER_NODE=8
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

DATA=/raid/imagenet
LOG_DIR=./logs/sew50_add_T4

mkdir -p ${LOG_DIR}

python -m torch.distributed.launch \
    --nproc_per_node=${GPUS_PER_NODE} \
    --nnodes=${NNODES} \
    --node_rank=${NODE_RANK} \
    --master_addr=${MASTER_ADDR} \
    --master_port=${MASTER_PORT} \
    --use_env \
    train.py \
    --model sew_resnet50 --connect_f ADD --T 4 \
    -b 32 --lr 0.1 --epochs 320 --cos_lr_T 320 \
    --data-path ${DATA} --output-dir ${LOG_DIR} \
    --amp --tb --cache-dataset --print-freq 4096 \
    2>&1 | tee ${LOG_DIR}/node${NODE_RANK}.log
