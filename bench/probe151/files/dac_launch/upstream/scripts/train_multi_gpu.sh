#!/usr/bin/env bash
# Launch DAC training on a single node with several GPUs.
#
#   bash scripts/train_multi_gpu.sh conf/final/44khz.yml runs/44khz 0,1,2,3
#
set -euo pipefail

CONFIG=${1:-conf/final/44khz.yml}
SAVE_PATH=${2:-runs/dac}
GPUS=${3:-0,1,2,3}

export CUDA_VISIBLE_DEVICES=${GPUS}
NUM_GPUS=$(echo "${GPUS}" | tr ',' '\n' | wc -l)

# NCCL tuning for PCIe boxes without NVLink; harmless on DGX.
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}

# Keep dataloader workers from oversubscribing the CPU.
export OMP_NUM_THREADS=4
export MKL_NUM_THREADS=4

# Allocator setting that avoids fragmentation with variable-length eval batches.
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

mkdir -p "${SAVE_PATH}"
echo "Training on GPUs ${CUDA_VISIBLE_DEVICES} (${NUM_GPUS} procs), logs in ${SAVE_PATH}"
nvidia-smi --query-gpu=index,name,memory.total --format=csv

torchrun --nproc_per_node "${NUM_GPUS}" --master_port "${MASTER_PORT:-29500}" \
    scripts/train.py \
    --args.load "${CONFIG}" \
    --save_path "${SAVE_PATH}" \
    --amp 1 \
    2>&1 | tee "${SAVE_PATH}/train.log"
