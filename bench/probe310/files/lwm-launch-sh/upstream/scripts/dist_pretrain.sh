#!/usr/bin/env bash
# Multi-GPU / multi-node MCM pre-training of LWM.
#
#   single node : bash scripts/dist_pretrain.sh configs/lwm_base.yaml 8
#   two nodes   : NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/dist_pretrain.sh configs/lwm_large.yaml 8
#                 NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash scripts/dist_pretrain.sh configs/lwm_large.yaml 8
set -euo pipefail

CONFIG=${1:-configs/lwm_base.yaml}
GPUS=${2:-8}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29511}
OUTPUT=${OUTPUT:-./runs/$(basename "${CONFIG}" .yaml)_$(date +%Y%m%d_%H%M)}

# pick GPUs (default: the first $GPUS devices)
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((GPUS - 1)))}

# NCCL tuning for our cluster (IB between nodes, no P2P over the PCIe switch on the old boxes)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-ens3f0}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_P2P_DISABLE=0
export OMP_NUM_THREADS=8
export PYTHONPATH=$(pwd):${PYTHONPATH:-}

mkdir -p "${OUTPUT}"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv | tee "${OUTPUT}/gpus.csv"

torchrun \
    --nnodes="${NNODES}" \
    --node_rank="${NODE_RANK}" \
    --nproc_per_node="${GPUS}" \
    --master_addr="${MASTER_ADDR}" \
    --master_port="${MASTER_PORT}" \
    tools/pretrain_ddp.py \
    --config "${CONFIG}" \
    --output "${OUTPUT}" \
    2>&1 | tee "${OUTPUT}/train_rank${NODE_RANK}.log"
