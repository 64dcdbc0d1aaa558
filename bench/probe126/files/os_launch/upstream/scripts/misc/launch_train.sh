#!/bin/bash
# Multi-node launcher used on our 8x H800 nodes.
#
# Usage (run on every node):
#   NNODES=4 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/misc/launch_train.sh configs/opensora-v1-2/train/stage1.py --data-path /data/meta.csv
#
set -x

CONFIG=$1
shift

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

# ---- devices ----
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NUM_GPUS=$(echo $CUDA_VISIBLE_DEVICES | tr ',' '\n' | wc -l)

# ---- communication ----
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_SOCKET_IFNAME=eth0
export NCCL_DEBUG=WARN
export NCCL_P2P_LEVEL=NVL
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1

# ---- runtime ----
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

LOG_DIR=outputs/logs
mkdir -p $LOG_DIR
LOG_FILE=$LOG_DIR/train_node${NODE_RANK}_$(date +%Y%m%d_%H%M%S).log

# record the GPU state at start-up, handy when a node is flaky
nvidia-smi > $LOG_DIR/gpu_node${NODE_RANK}.txt

torchrun \
    --nnodes=$NNODES \
    --nproc_per_node=$NUM_GPUS \
    --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR \
    --master_port=$MASTER_PORT \
    scripts/train.py $CONFIG "$@" 2>&1 | tee $LOG_FILE
