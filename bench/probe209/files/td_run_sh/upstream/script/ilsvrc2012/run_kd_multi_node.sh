#!/usr/bin/env bash
# Multi-node KD run on ILSVRC 2012 (2 nodes x 4 GPUs).
# usage: NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash script/ilsvrc2012/run_kd_multi_node.sh
set -euo pipefail

NNODES=${NNODES:-2}
NODE_RANK=${NODE_RANK:-0}
GPUS_PER_NODE=${GPUS_PER_NODE:-4}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
CONFIG=${CONFIG:-configs/sample/ilsvrc2012/kd/resnet18_from_resnet34.yaml}
LOG_DIR=${LOG_DIR:-log/ilsvrc2012/kd}

# NCCL settings for our cluster (100G RoCE, no InfiniBand)
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=ens3f0
export NCCL_IB_DISABLE=1
export CUDA_DEVICE_MAX_CONNECTIONS=1
export OMP_NUM_THREADS=8

export CUDA_VISIBLE_DEVICES=0,1,2,3

WORLD_SIZE=$((NNODES * GPUS_PER_NODE))
mkdir -p "${LOG_DIR}"

echo "node ${NODE_RANK}/${NNODES}, ${GPUS_PER_NODE} GPUs per node, world size ${WORLD_SIZE}"
nvidia-smi -L

torchrun \
    --nnodes "${NNODES}" \
    --node_rank "${NODE_RANK}" \
    --nproc_per_node "${GPUS_PER_NODE}" \
    --master_addr "${MASTER_ADDR}" \
    --master_port "${MASTER_PORT}" \
    examples/torchvision/image_classification.py \
        --config "${CONFIG}" \
        --world_size "${WORLD_SIZE}" \
        --log "${LOG_DIR}/resnet18_from_resnet34-node${NODE_RANK}.log" \
        -adjust_lr
