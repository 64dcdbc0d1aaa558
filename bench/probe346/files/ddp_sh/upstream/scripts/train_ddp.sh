#!/usr/bin/env bash
# Multi-GPU / multi-node launcher for the Music Transformer DDP trainer.
#
#   single node : bash scripts/train_ddp.sh
#   two nodes   : NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/train_ddp.sh   (on node 0)
#                 NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash scripts/train_ddp.sh   (on node 1)
set -euo pipefail

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
GPUS_PER_NODE=$(python -c "import torch; print(torch.cuda.device_count())")

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

# NCCL settings for our cluster (25GbE between nodes, no InfiniBand)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=4

RUN_NAME=${RUN_NAME:-mt_rpr_maestro_$(date +%Y%m%d_%H%M)}
OUT_DIR=runs/${RUN_NAME}
mkdir -p ${OUT_DIR}

echo "nodes=${NNODES} gpus/node=${GPUS_PER_NODE} master=${MASTER_ADDR}:${MASTER_PORT}"

torchrun \
    --nnodes ${NNODES} \
    --node_rank ${NODE_RANK} \
    --nproc_per_node ${GPUS_PER_NODE} \
    --master_addr ${MASTER_ADDR} \
    --master_port ${MASTER_PORT} \
    train_ddp.py \
        -input_dir ./dataset/maestro_rpr \
        -output_dir ${OUT_DIR} \
        --rpr \
        --amp \
        -batch_size 4 \
        -max_sequence 2048 \
        -n_layers 6 \
        -epochs 300 \
        -n_workers 4 \
    2>&1 | tee ${OUT_DIR}/train.log
