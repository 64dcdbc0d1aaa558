#!/usr/bin/env bash
# Gradient-similarity data valuation on one node, all GPUs.
#
#   bash scripts/launch_valuation.sh cifar10 resnet18            # all GPUs
#   GPUS=0,1 bash scripts/launch_valuation.sh cifar10 resnet18   # subset
#
set -euo pipefail

DATASET=${1:-cifar10}
ARCH=${2:-resnet18}
PROJ_DIM=${PROJ_DIM:-8192}
OUT=outputs/grad_valuation/${DATASET}_${ARCH}_p${PROJ_DIM}

export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3,4,5,6,7}
NGPUS=$(echo "${CUDA_VISIBLE_DEVICES}" | tr ',' '\n' | wc -l)
if ! nvidia-smi -L > /dev/null 2>&1; then
    echo "nvidia-smi failed -- is the driver loaded?" >&2
    exit 1
fi

# NCCL settings for the 8x A100 SXM nodes (NVLink, no IB inside the job)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_P2P_LEVEL=NVL
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=8
export TORCH_DISTRIBUTED_DEBUG=${TORCH_DISTRIBUTED_DEBUG:-OFF}

mkdir -p "${OUT}"
echo "[launch] ${NGPUS} GPUs -> ${OUT}"

torchrun \
    --standalone \
    --nproc_per_node="${NGPUS}" \
    --master_port=${MASTER_PORT:-29501} \
    -m valuation.dist_grad_valuation \
    --dataset "${DATASET}" \
    --arch "${ARCH}" \
    --proj-dim "${PROJ_DIM}" \
    --fp16 \
    --out "${OUT}" 2>&1 | tee "${OUT}/log.txt"

nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv >> "${OUT}/log.txt"
