#!/bin/bash
# Multi-GPU / multi-node training launcher for RecBole.
#
# Single node, 4 GPUs:
#   bash run_example/ddp_train.sh LightGCN ml-1m 4
# Two nodes (run on each node, set NODE_RANK / MASTER_ADDR):
#   NODE_RANK=0 MASTER_ADDR=10.0.0.1 NNODES=2 bash run_example/ddp_train.sh LightGCN ml-1m 4

set -e

MODEL=${1:-LightGCN}
DATASET=${2:-ml-1m}
NPROC=${3:-4}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-localhost}
MASTER_PORT=${MASTER_PORT:-5678}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export OMP_NUM_THREADS=4

echo "==> GPUs on $(hostname):"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

WORLD_SIZE=$((NNODES * NPROC))
OFFSET=$((NODE_RANK * NPROC))

GPU_IDS=$(echo ${CUDA_VISIBLE_DEVICES} | cut -d',' -f1-${NPROC})

mkdir -p log

python run_recbole.py \
    --model=${MODEL} \
    --dataset=${DATASET} \
    --config_files="recbole/properties/model/${MODEL}.yaml" \
    --gpu_id="${GPU_IDS}" \
    --nproc=${NPROC} \
    --world_size=${WORLD_SIZE} \
    --group_offset=${OFFSET} \
    --ip=${MASTER_ADDR} \
    --port=${MASTER_PORT} \
    2>&1 | tee log/${MODEL}_${DATASET}_node${NODE_RANK}.log
