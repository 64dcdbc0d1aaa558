#!/bin/bash
# Multi-node DDP training of the endoscopic tool segmentation bundle.
# Run on every node:  NODE_RANK=<0..N-1> MASTER_ADDR=<node0 ip> bash scripts/run_ddp.sh
set -e

NNODES=${NNODES:-2}
NODE_RANK=${NODE_RANK:-0}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

# NCCL settings for our InfiniBand cluster; comment out on plain Ethernet
export NCCL_DEBUG=INFO
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=ib0
export NCCL_ASYNC_ERROR_HANDLING=1
export CUDA_DEVICE_MAX_CONNECTIONS=1
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

export PYTHONPATH=$(pwd):$PYTHONPATH
BUNDLE=$(pwd)

# sanity: all GPUs present
NUM_GPUS=$(nvidia-smi -L | wc -l)
if [ "$NUM_GPUS" -lt "$GPUS_PER_NODE" ]; then
    echo "expected $GPUS_PER_NODE GPUs, found $NUM_GPUS"; exit 1
fi

torchrun \
    --nnodes=$NNODES \
    --node_rank=$NODE_RANK \
    --nproc_per_node=$GPUS_PER_NODE \
    --master_addr=$MASTER_ADDR \
    --master_port=$MASTER_PORT \
    -m monai.bundle run \
    --meta_file $BUNDLE/configs/metadata.json \
    --config_file "['$BUNDLE/configs/train.json','$BUNDLE/configs/multi_gpu_train.json']" \
    --logging_file $BUNDLE/configs/logging.conf \
    --bundle_root $BUNDLE
