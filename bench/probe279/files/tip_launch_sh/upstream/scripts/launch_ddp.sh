#!/bin/bash
# Multi-GPU / multi-node launcher for train_ddp.py
#
# single node, all 8 GPUs:   bash scripts/launch_ddp.sh configs/tip_amass.yaml
# two nodes:                 NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/launch_ddp.sh configs/tip_amass.yaml
#                            NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash scripts/launch_ddp.sh configs/tip_amass.yaml

CFG=${1:-configs/tip_amass.yaml}
shift || true

GPUS=${GPUS:-0,1,2,3,4,5,6,7}
NPROC_PER_NODE=$(echo ${GPUS} | tr ',' '\n' | wc -l)
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
OUT=${OUT:-output/tip_$(date +%m%d_%H%M)}

export CUDA_VISIBLE_DEVICES=${GPUS}
export OMP_NUM_THREADS=8

# NCCL settings for our cluster (100G RoCE, no InfiniBand); see docs/cluster.md
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=1
export NCCL_P2P_LEVEL=NVL
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1

mkdir -p ${OUT}
echo "nodes=${NNODES} rank=${NODE_RANK} gpus/node=${NPROC_PER_NODE} master=${MASTER_ADDR}:${MASTER_PORT}"

torchrun \
    --nnodes=${NNODES} \
    --node_rank=${NODE_RANK} \
    --nproc_per_node=${NPROC_PER_NODE} \
    --master_addr=${MASTER_ADDR} \
    --master_port=${MASTER_PORT} \
    train_ddp.py --cfg ${CFG} --out ${OUT} "$@" 2>&1 | tee ${OUT}/train_node${NODE_RANK}.log
