#!/usr/bin/env bash
# Multi-node / multi-GPU launcher for train_ddp.py (XLS-R + SLS).
#
# single node, 4 GPUs:
#   GPUS=0,1,2,3 bash scripts/launch_ddp.sh conf/xlsr_sls.yaml
# two nodes (run on each node with NODE_RANK=0/1):
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.11 bash scripts/launch_ddp.sh conf/xlsr_sls.yaml

set -eo pipefail

CONFIG=${1:?usage: launch_ddp.sh <config.yaml> [extra args]}
shift || true

GPUS=${GPUS:-0,1,2,3}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29511}
NPROC_PER_NODE=$(echo "${GPUS}" | tr ',' '\n' | wc -l)

export CUDA_VISIBLE_DEVICES=${GPUS}
export OMP_NUM_THREADS=4
export TOKENIZERS_PARALLELISM=false

# --- NCCL settings for our cluster (25GbE, no InfiniBand) ---
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=1
export GLOO_SOCKET_IFNAME=eth0

EXP=exp/$(basename "${CONFIG}" .yaml)_n${NNODES}x${NPROC_PER_NODE}
mkdir -p "${EXP}"

echo "nodes=${NNODES} rank=${NODE_RANK} gpus/node=${NPROC_PER_NODE} master=${MASTER_ADDR}:${MASTER_PORT}"

torchrun \
    --nnodes="${NNODES}" \
    --node_rank="${NODE_RANK}" \
    --nproc_per_node="${NPROC_PER_NODE}" \
    --master_addr="${MASTER_ADDR}" \
    --master_port="${MASTER_PORT}" \
    train_ddp.py \
        --config "${CONFIG}" \
        --out_dir "${EXP}" \
        --dist-backend nccl \
        --amp \
        "$@" 2>&1 | tee "${EXP}/train_node${NODE_RANK}.log"
