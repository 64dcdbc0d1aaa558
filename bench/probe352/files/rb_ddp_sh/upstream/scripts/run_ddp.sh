#!/usr/bin/env bash
# Multi-GPU / multi-node launcher for RecBole experiments.
#
# Single node, 4 GPUs:
#   bash scripts/run_ddp.sh SASRec ml-1m
# Two nodes (run on each node, NODE_RANK=0 on the master):
#   MASTER_ADDR=10.0.0.11 NNODES=2 NODE_RANK=1 bash scripts/run_ddp.sh SASRec ml-20m
#
# RecBole spawns one worker per GPU itself (mp.spawn inside run_recbole.py), so this
# script only prepares the environment and passes --nproc/--world_size/--offset.

set -euo pipefail

MODEL=${1:-SASRec}
DATASET=${2:-ml-1m}
CONFIG=${3:-configs/${MODEL,,}_${DATASET}.yaml}

GPUS=${GPUS:-"0,1,2,3"}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-5678}

export CUDA_VISIBLE_DEVICES=${GPUS}
NPROC=$(echo "${GPUS}" | awk -F',' '{print NF}')
WORLD_SIZE=$((NPROC * NNODES))
OFFSET=$((NPROC * NODE_RANK))

# NCCL settings that worked on our A100 boxes (no InfiniBand between the two racks).
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_DISABLE=1
export NCCL_P2P_LEVEL=NVL
export OMP_NUM_THREADS=8

# Make CUDA allocator fragmentation less painful for the full-sort evaluation on ml-20m.
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512

LOG_DIR=log/${MODEL}/${DATASET}
mkdir -p "${LOG_DIR}"
STAMP=$(date +%Y%m%d-%H%M%S)

echo "==> ${MODEL} on ${DATASET}: ${NPROC} GPU(s) x ${NNODES} node(s), world_size=${WORLD_SIZE}, offset=${OFFSET}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv | tee "${LOG_DIR}/gpus-${STAMP}.csv"

python run_recbole.py \
    --model="${MODEL}" \
    --dataset="${DATASET}" \
    --config_files="${CONFIG}" \
    --nproc="${NPROC}" \
    --world_size="${WORLD_SIZE}" \
    --ip="${MASTER_ADDR}" \
    --port="${MASTER_PORT}" \
    --group_offset="${OFFSET}" \
    --gpu_id="${GPUS}" \
    2>&1 | tee "${LOG_DIR}/train-${STAMP}.log"

# Keep the last best checkpoint next to the log for the leaderboard script.
LATEST=$(ls -t saved/${MODEL}-*.pth 2>/dev/null | head -n 1 || true)
if [[ -n "${LATEST}" ]]; then
    cp "${LATEST}" "${LOG_DIR}/best-${STAMP}.pth"
    echo "==> checkpoint copied to ${LOG_DIR}/best-${STAMP}.pth"
fi
