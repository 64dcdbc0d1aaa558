#!/usr/bin/env bash
# Multi-GPU training for the large datasets (PEMS07 / LargeST-CA) on one 8-GPU node.
# usage: bash scripts/train_large.sh baselines/D2STGNN/PEMS07.py "0,1,2,3"
set -euo pipefail

CFG=${1:-baselines/D2STGNN/PEMS07.py}
GPUS=${2:-"0,1,2,3"}

# NCCL tuning for PCIe-only boxes (no NVLink between the cards)
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export MASTER_PORT=${MASTER_PORT:-29517}
export OMP_NUM_THREADS=8

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

LOG_DIR=logs/$(basename "${CFG}" .py)
mkdir -p "${LOG_DIR}"

python experiments/train.py -c "${CFG}" -g "${GPUS}" 2>&1 | tee "${LOG_DIR}/train_$(date +%Y%m%d_%H%M%S).log"
