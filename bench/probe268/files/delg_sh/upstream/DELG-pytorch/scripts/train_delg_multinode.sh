#!/bin/bash
# Multi-node DELG training on GLDv2-clean.
# Run once per node:  NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/train_delg_multinode.sh
#                     NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash scripts/train_delg_multinode.sh

NNODES=${NNODES:-2}
NODE_RANK=${NODE_RANK:-0}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
CFG=${CFG:-configs/resnet50_delg_8gpu.yaml}

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5_0,mlx5_1
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=8

echo "node ${NODE_RANK}/${NNODES} master ${MASTER_ADDR}:${MASTER_PORT}"
nvidia-smi -L

python -m torch.distributed.launch \
    --nnodes ${NNODES} \
    --node_rank ${NODE_RANK} \
    --nproc_per_node ${GPUS_PER_NODE} \
    --master_addr ${MASTER_ADDR} \
    --master_port ${MASTER_PORT} \
    tools/train_net_dist.py \
    --cfg ${CFG} \
    NUM_GPUS $((NNODES * GPUS_PER_NODE)) \
    DIST_BACKEND nccl \
    OUT_DIR ./output/delg_r50_${NNODES}nodes
