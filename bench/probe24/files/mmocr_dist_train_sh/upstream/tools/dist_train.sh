#!/usr/bin/env bash
# Launch a distributed MMOCR training job on one or more GPU nodes.
#
#   CUDA_VISIBLE_DEVICES=0,1,2,3 ./tools/dist_train.sh CONFIG 4 [--amp]
#
# NNODES / NODE_RANK / MASTER_ADDR / PORT may be given for multi-node runs.

set -euo pipefail

CONFIG=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}

# default to every GPU on the node when the caller did not pick any
if [ -z "${CUDA_VISIBLE_DEVICES:-}" ]; then
    export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS - 1)))
fi

# NCCL tuning that helped on our 8xA100 nodes
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}

WORK_DIR=${WORK_DIR:-"work_dirs/$(basename "${CONFIG}" .py)"}
mkdir -p "${WORK_DIR}"

echo "Training ${CONFIG} on ${GPUS} GPU(s) x ${NNODES} node(s)"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

PYTHONPATH="$(dirname $0)/..":${PYTHONPATH:-} \
python -m torch.distributed.launch \
    --nnodes=$NNODES \
    --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR \
    --nproc_per_node=$GPUS \
    --master_port=$PORT \
    $(dirname "$0")/train.py \
    $CONFIG \
    --work-dir "${WORK_DIR}" \
    --launcher pytorch ${@:3}
