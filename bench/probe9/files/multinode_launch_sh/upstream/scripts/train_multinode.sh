#!/usr/bin/env bash
# Multi-node launcher shared by the ImageNet / segmentation trainers in this repo.
#
# usage (on every node):
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash scripts/train_multinode.sh configs/hrnet_w48_cityscapes.yaml
#
set -euo pipefail

CONFIG=${1:?"usage: $0 CONFIG [extra args]"}
shift || true
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

# ---- devices -------------------------------------------------------------------------
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
GPUS_PER_NODE=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)

# ---- communication -------------------------------------------------------------------
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5
export GLOO_SOCKET_IFNAME=${GLOO_SOCKET_IFNAME:-eth0}

# ---- misc ----------------------------------------------------------------------------
export OMP_NUM_THREADS=8
export CUDA_LAUNCH_BLOCKING=0
export PYTHONUNBUFFERED=1

echo "[$(hostname)] node ${NODE_RANK}/${NNODES}: ${GPUS_PER_NODE} GPUs, master ${MASTER_ADDR}:${MASTER_PORT}"
nvidia-smi

LOG_DIR=logs/$(date +%Y%m%d_%H%M%S)_node${NODE_RANK}
mkdir -p "${LOG_DIR}"
cp "${CONFIG}" "${LOG_DIR}/"

# torchrun appeared in 1.10; keep the old launcher for the 1.8 images still in the cluster
if python -c "import torch, sys; v = tuple(int(x) for x in torch.__version__.split('+')[0].split('.')[:2]); sys.exit(0 if v >= (1, 10) else 1)"; then
    torchrun --nnodes="${NNODES}" --node_rank="${NODE_RANK}" --nproc_per_node="${GPUS_PER_NODE}" \
        --master_addr="${MASTER_ADDR}" --master_port="${MASTER_PORT}" \
        tools/train.py --cfg "${CONFIG}" "$@" 2>&1 | tee "${LOG_DIR}/train.log"
else
    python -m torch.distributed.launch --nnodes="${NNODES}" --node_rank="${NODE_RANK}" \
        --nproc_per_node="${GPUS_PER_NODE}" --master_addr="${MASTER_ADDR}" --master_port="${MASTER_PORT}" \
        tools/train.py --cfg "${CONFIG}" "$@" 2>&1 | tee "${LOG_DIR}/train.log"
fi

# keep the last GPU memory snapshot next to the log for post-mortems
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv > "${LOG_DIR}/gpu_mem.csv" || true
