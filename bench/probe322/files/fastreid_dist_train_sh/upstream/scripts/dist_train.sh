#!/usr/bin/env bash
# Multi-GPU / multi-node launcher for fastreid training.
#
# usage:
#   bash scripts/dist_train.sh configs/VeRi/sbs_R50-ibn.yml 4 [extra config opts]
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/dist_train.sh configs/VeRi/sbs_R50-ibn.yml 8
#
# Extra arguments are forwarded to tools/train_net.py, e.g.
#   bash scripts/dist_train.sh configs/Market1501/bagtricks_R50.yml 4 MODEL.BACKBONE.WITH_IBN True

set -e

CONFIG=$1
GPUS=${2:-4}
shift 2 || true

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
PORT=${PORT:-29500}

if [ -z "${CONFIG}" ]; then
    echo "usage: $0 CONFIG [GPUS] [opts...]" >&2
    exit 1
fi

# use the first $GPUS cards unless the caller already restricted the visible devices
if [ -z "${CUDA_VISIBLE_DEVICES}" ]; then
    NUM_VISIBLE=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
    if [ "${GPUS}" -gt "${NUM_VISIBLE}" ]; then
        echo "requested ${GPUS} GPUs but only ${NUM_VISIBLE} are present on $(hostname)" >&2
        exit 1
    fi
    export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS - 1)))
fi

# communication settings (InfiniBand on the training cluster, plain ethernet elsewhere)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}

LOG_DIR=logs/launcher
mkdir -p ${LOG_DIR}
STAMP=$(date +%Y%m%d-%H%M%S)

echo "node ${NODE_RANK}/${NNODES}: ${GPUS} GPU(s), master ${MASTER_ADDR}:${PORT}"

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
python3 tools/train_net.py \
    --config-file ${CONFIG} \
    --num-gpus ${GPUS} \
    --num-machines ${NNODES} \
    --machine-rank ${NODE_RANK} \
    --dist-url tcp://${MASTER_ADDR}:${PORT} \
    "$@" 2>&1 | tee ${LOG_DIR}/train-${STAMP}-node${NODE_RANK}.log
