#!/usr/bin/env bash
# Multi-GPU / multi-node launcher for monai_reg/train_ddp.py.
#
# single node, 4 GPUs:
#   bash scripts/launch_ddp.sh
# two nodes (run on each node, NODE_RANK=0 on the master):
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/launch_ddp.sh
#   NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.1 bash scripts/launch_ddp.sh

set -e

GPUS=${GPUS:-0,1,2,3}
NPROC_PER_NODE=$(echo "${GPUS}" | tr ',' '\n' | wc -l)
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
DATA_DIR=${DATA_DIR:-/data/OASIS}
OUT_DIR=${OUT_DIR:-./runs/oasis_ddp_${NNODES}x${NPROC_PER_NODE}}

export CUDA_VISIBLE_DEVICES=${GPUS}

# NCCL settings for our cluster (IB on ib0, no P2P across the PCIe switch on the old nodes)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_DISABLE=0
export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}
export TORCH_NCCL_BLOCKING_WAIT=0
export OMP_NUM_THREADS=4

mkdir -p "${OUT_DIR}"

echo "nodes=${NNODES} node_rank=${NODE_RANK} procs/node=${NPROC_PER_NODE} master=${MASTER_ADDR}:${MASTER_PORT}"

torchrun \
  --nnodes="${NNODES}" \
  --node_rank="${NODE_RANK}" \
  --nproc_per_node="${NPROC_PER_NODE}" \
  --master_addr="${MASTER_ADDR}" \
  --master_port="${MASTER_PORT}" \
  monai_reg/train_ddp.py \
    --data-dir "${DATA_DIR}" \
    --out-dir "${OUT_DIR}" \
    --batch-size 2 \
    --epochs 300 \
    --amp \
    "$@" 2>&1 | tee "${OUT_DIR}/train_node${NODE_RANK}.log"
