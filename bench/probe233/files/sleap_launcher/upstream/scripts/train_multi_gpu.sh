#!/usr/bin/env bash
# Multi-GPU training of the SLEAP (PyTorch backend) models on one node.
#
# Usage:
#   bash scripts/train_multi_gpu.sh <config.yaml> <labels.slp> [num_gpus]
#
# Picks the GPUs from $GPU_IDS (default: all four cards of the lab workstation),
# then launches one process per GPU with torchrun. DistributedDataParallel uses
# the NCCL backend (see sleap_torch/training/trainer.py).
set -euo pipefail

CONFIG=${1:?"usage: $0 <config.yaml> <labels.slp> [num_gpus]"}
LABELS=${2:?"usage: $0 <config.yaml> <labels.slp> [num_gpus]"}
NUM_GPUS=${3:-4}
GPU_IDS=${GPU_IDS:-0,1,2,3}
MASTER_PORT=${MASTER_PORT:-29500}

export CUDA_VISIBLE_DEVICES=${GPU_IDS}
export OMP_NUM_THREADS=4

# NCCL: the workstation GPUs sit on different PCIe switches, P2P over the
# root complex hangs on some driver versions -> disable P2P, log init problems.
export NCCL_P2P_DISABLE=1
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=1

echo "Training ${CONFIG} on GPUs ${CUDA_VISIBLE_DEVICES} (${NUM_GPUS} processes)"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

RUN_NAME=$(basename "${CONFIG}" .yaml)_$(date +%y%m%d_%H%M%S)

torchrun \
    --standalone \
    --nnodes=1 \
    --nproc_per_node="${NUM_GPUS}" \
    --master_port="${MASTER_PORT}" \
    -m sleap_torch.training.trainer \
    "${CONFIG}" "${LABELS}" \
    --run_name "${RUN_NAME}" \
    --amp

echo "Done: models/${RUN_NAME}"
