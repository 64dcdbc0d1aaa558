#!/bin/bash
# DeepLabV3-ResNet101 on COCO (VOC classes), 8 GPUs, torchvision reference recipe:
#   torchrun --nproc_per_node=8 train.py --lr 0.02 --dataset coco -b 4 --model deeplabv3_resnet101 --aux-loss
#
# Multi-node: set NNODES / NODE_RANK / MASTER_ADDR on every node.
set -euo pipefail

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
DATA_PATH=${DATA_PATH:-/datasets/coco}
OUTPUT_DIR=${OUTPUT_DIR:-./output/deeplabv3_resnet101}
MODEL=${MODEL:-deeplabv3_resnet101}
EPOCHS=${EPOCHS:-30}
BATCH_SIZE=${BATCH_SIZE:-4}

# one process per visible GPU
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NGPUS=$(nvidia-smi -L | wc -l)

# NCCL tuning for our 2x100G RoCE cluster
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_HCA=mlx5_0,mlx5_1
export NCCL_IB_GID_INDEX=3
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0

export OMP_NUM_THREADS=4
export PYTHONUNBUFFERED=1

mkdir -p "${OUTPUT_DIR}"

echo "nodes=${NNODES} rank=${NODE_RANK} gpus/node=${NGPUS} master=${MASTER_ADDR}:${MASTER_PORT}"
nvidia-smi topo -m || true

torchrun \
    --nnodes="${NNODES}" \
    --node_rank="${NODE_RANK}" \
    --nproc_per_node="${NGPUS}" \
    --master_addr="${MASTER_ADDR}" \
    --master_port="${MASTER_PORT}" \
    train.py \
        --data-path "${DATA_PATH}" \
        --dataset coco \
        --model "${MODEL}" \
        --aux-loss \
        --lr 0.02 \
        -b "${BATCH_SIZE}" \
        --epochs "${EPOCHS}" \
        --weights-backbone ResNet101_Weights.IMAGENET1K_V1 \
        --amp \
        --output-dir "${OUTPUT_DIR}" \
        2>&1 | tee "${OUTPUT_DIR}/train_node${NODE_RANK}.log"
