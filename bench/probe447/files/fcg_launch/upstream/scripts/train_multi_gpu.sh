#!/usr/bin/env bash
# Launch DDP training on all GPUs of this node (or on several nodes, see below).
#
#   bash scripts/train_multi_gpu.sh                      # single node, all visible GPUs
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/train_multi_gpu.sh
set -euo pipefail

CONFIG=${CONFIG:-configs/gin_fcg.yaml}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NGPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)

# NCCL settings for our cluster (25GbE, no InfiniBand)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=${IFNAME:-eth0}
export OMP_NUM_THREADS=8

echo "nodes=${NNODES} node_rank=${NODE_RANK} gpus/node=${NGPUS} config=${CONFIG}"

if [ "${NNODES}" -eq 1 ]; then
  torchrun --standalone --nproc_per_node="${NGPUS}" train_ddp.py --config "${CONFIG}" "$@"
else
  torchrun --nnodes="${NNODES}" --node_rank="${NODE_RANK}" --nproc_per_node="${NGPUS}" \
    --master_addr="${MASTER_ADDR}" --master_port="${MASTER_PORT}" \
    train_ddp.py --config "${CONFIG}" "$@"
fi
