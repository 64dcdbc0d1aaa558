#!/usr/bin/env bash
# Launch scripts/train_ddp.py on one or more 8xA100 nodes.
#
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/launch_ddp.sh configs/ednet_ddp.yaml
#
# Single node: just `bash scripts/launch_ddp.sh configs/ednet_ddp.yaml`.
set -e

CONFIG=${1:-configs/ednet_ddp.yaml}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NPROC_PER_NODE=$(echo "$CUDA_VISIBLE_DEVICES" | awk -F, '{print NF}')

source /opt/conda/etc/profile.d/conda.sh
conda activate kt

# NCCL settings for our InfiniBand cluster
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5_0,mlx5_1
export NCCL_P2P_LEVEL=NVL
export OMP_NUM_THREADS=8
export PYTHONPATH=$(pwd):$PYTHONPATH

RUN_NAME=$(basename "$CONFIG" .yaml)_$(date +%Y%m%d_%H%M%S)
mkdir -p logs

echo "nodes=$NNODES node_rank=$NODE_RANK gpus/node=$NPROC_PER_NODE master=$MASTER_ADDR:$MASTER_PORT"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

torchrun \
    --nnodes="$NNODES" \
    --node_rank="$NODE_RANK" \
    --nproc_per_node="$NPROC_PER_NODE" \
    --master_addr="$MASTER_ADDR" \
    --master_port="$MASTER_PORT" \
    scripts/train_ddp.py \
    --config "$CONFIG" \
    --backend nccl \
    --out_dir "runs/$RUN_NAME" \
    2>&1 | tee "logs/$RUN_NAME.node$NODE_RANK.log"
