#!/usr/bin/env bash
# Launch CheXpert training on one 8-GPU node (or several, see MULTI-NODE below).
#
#   ./scripts/train_8gpu.sh configs/densenet121_chexpert.yaml [extra train.py args]
#
set -euo pipefail

CONFIG=${1:-configs/densenet121_chexpert.yaml}
shift || true

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

# ---- GPU selection -------------------------------------------------------
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NGPUS=$(nvidia-smi --list-gpus | wc -l)
if [[ -n "${CUDA_VISIBLE_DEVICES}" ]]; then
    NGPUS=$(echo "${CUDA_VISIBLE_DEVICES}" | tr ',' '\n' | wc -l)
fi

# ---- NCCL ----------------------------------------------------------------
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_P2P_LEVEL=NVL

# ---- threads / misc --------------------------------------------------------
export OMP_NUM_THREADS=4
export MKL_NUM_THREADS=4
export PYTHONUNBUFFERED=1

OUTPUT=${OUTPUT:-output/$(basename "${CONFIG}" .yaml)_$(date +%Y%m%d_%H%M%S)}
mkdir -p "${OUTPUT}"

echo "nodes=${NNODES} node_rank=${NODE_RANK} gpus/node=${NGPUS} master=${MASTER_ADDR}:${MASTER_PORT}"
nvidia-smi > "${OUTPUT}/nvidia-smi.txt"

# MULTI-NODE: run this script on every node with NNODES/NODE_RANK/MASTER_ADDR set.
python -m torch.distributed.launch \
    --nproc_per_node="${NGPUS}" \
    --nnodes="${NNODES}" \
    --node_rank="${NODE_RANK}" \
    --master_addr="${MASTER_ADDR}" \
    --master_port="${MASTER_PORT}" \
    --use_env \
    train.py -c "${CONFIG}" --output "${OUTPUT}" "$@" 2>&1 | tee "${OUTPUT}/train.log"
