#!/usr/bin/env bash
# Multi-node pretraining of the EHR transformer.
#
# Run on every node (node 0 is the master):
#   NODE_RANK=0 MASTER_ADDR=10.0.0.11 NNODES=2 bash scripts/pretrain_multinode.sh
#   NODE_RANK=1 MASTER_ADDR=10.0.0.11 NNODES=2 bash scripts/pretrain_multinode.sh
set -e

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
DATA=${DATA:-/data/ehr/pretrain}
OUT=${OUT:-runs/ehr_base_$(date +%Y%m%d)}

# GPUs to use on this node (default: all 8)
export CUDA_VISIBLE_DEVICES=${GPU_IDS:-0,1,2,3,4,5,6,7}
NPROC_PER_NODE=$(nvidia-smi -L | wc -l)
if [ -n "$GPU_IDS" ]; then
    NPROC_PER_NODE=$(echo "$GPU_IDS" | tr ',' '\n' | wc -l)
fi

# NCCL settings for our InfiniBand cluster
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=${IFNAME:-ib0}
export NCCL_IB_HCA=mlx5
export NCCL_IB_GID_INDEX=3
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false

echo "node ${NODE_RANK}/${NNODES}  master ${MASTER_ADDR}:${MASTER_PORT}  gpus/node ${NPROC_PER_NODE}"

torchrun \
    --nnodes=${NNODES} \
    --node_rank=${NODE_RANK} \
    --nproc_per_node=${NPROC_PER_NODE} \
    --master_addr=${MASTER_ADDR} \
    --master_port=${MASTER_PORT} \
    train_ddp.py \
        --data ${DATA} \
        --out ${OUT} \
        --epochs 30 \
        --batch_size 64 \
        --max_len 512 \
        --precision bf16 \
        --attn_impl flash \
        --num_workers 8 \
        "$@"
