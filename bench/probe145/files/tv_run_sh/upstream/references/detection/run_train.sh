#!/bin/bash
# Faster R-CNN / Mask R-CNN training on COCO with torchrun (8 GPUs per node).
#
#   MODEL=maskrcnn_resnet50_fpn bash run_train.sh
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash run_train.sh
#
set -e

MODEL=${MODEL:-fasterrcnn_resnet50_fpn}
DATA=${DATA:-/datasets01/COCO/022719/}
OUT=${OUT:-./output/${MODEL}}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
GPUS_PER_NODE=$(nvidia-smi -L | wc -l)

export CUDA_DEVICE_MAX_CONNECTIONS=1
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0
export CUBLAS_WORKSPACE_CONFIG=:4096:8

mkdir -p "${OUT}"

torchrun \
    --nnodes=${NNODES} \
    --node_rank=${NODE_RANK} \
    --nproc_per_node=${GPUS_PER_NODE} \
    --master_addr=${MASTER_ADDR} \
    --master_port=${MASTER_PORT} \
    train.py \
    --data-path "${DATA}" \
    --dataset coco \
    --model "${MODEL}" \
    --epochs 26 \
    --lr-steps 16 22 \
    --aspect-ratio-group-factor 3 \
    --lr 0.02 \
    --batch-size 2 \
    --weights-backbone ResNet50_Weights.IMAGENET1K_V1 \
    --amp \
    --output-dir "${OUT}" 2>&1 | tee "${OUT}/train_${NODE_RANK}.log"
