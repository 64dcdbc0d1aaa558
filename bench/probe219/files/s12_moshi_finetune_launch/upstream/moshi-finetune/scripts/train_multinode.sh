#!/bin/bash
# Multi-node finetuning of Moshi 7B with torchrun.
# Usage (on every node):
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/train_multinode.sh example/moshi_7B.yaml

CONFIG=${1:-example/moshi_7B.yaml}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}

# NCCL settings for our InfiniBand cluster
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0

export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false
export WANDB_PROJECT=${WANDB_PROJECT:-moshi-finetune}

echo "node ${NODE_RANK}/${NNODES} using GPUs ${CUDA_VISIBLE_DEVICES}"

torchrun \
    --nnodes "${NNODES}" \
    --node_rank "${NODE_RANK}" \
    --nproc-per-node "${GPUS_PER_NODE}" \
    --master_addr "${MASTER_ADDR}" \
    --master_port "${MASTER_PORT}" \
    -m train "${CONFIG}"
