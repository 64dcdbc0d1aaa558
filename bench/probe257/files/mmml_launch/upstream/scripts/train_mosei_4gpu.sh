#!/usr/bin/env bash
# Train MMML on CMU-MOSEI with 4 GPUs on a single node.
#   bash scripts/train_mosei_4gpu.sh [config]
# Pick other cards with e.g. CUDA_VISIBLE_DEVICES=4,5,6,7 bash scripts/train_mosei_4gpu.sh
set -euo pipefail

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_DEBUG=WARN
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false

NGPUS=$(echo ${CUDA_VISIBLE_DEVICES} | tr ',' '\n' | wc -l)
MASTER_PORT=${MASTER_PORT:-29511}
CONFIG=${1:-configs/mosei.yaml}
LOG_DIR=logs
mkdir -p ${LOG_DIR}

echo "launching ${NGPUS} processes, config=${CONFIG}"
nvidia-smi

torchrun --nproc_per_node=${NGPUS} --master_port=${MASTER_PORT} \
    train_ddp.py --config ${CONFIG} 2>&1 | tee ${LOG_DIR}/train_$(date +%m%d_%H%M).log
