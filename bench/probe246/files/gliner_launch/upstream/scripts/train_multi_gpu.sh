#!/usr/bin/env bash
# Multi-GPU GLiNER pre-training on the Pile-NER synthetic data.
#
#   bash scripts/train_multi_gpu.sh configs/config_large.yaml logs/gliner_large 0,1,2,3
#
# Single node by default; for two nodes export NNODES=2 NODE_RANK=<0|1> MASTER_ADDR=<host of rank 0>.
set -eo pipefail

CONFIG=${1:-configs/config_large.yaml}
LOG_DIR=${2:-logs/gliner_large}
GPUS=${3:-0,1,2,3}

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29501}

NUM_GPUS=$(echo "${GPUS}" | tr ',' '\n' | wc -l)
WORLD_SIZE=$((NUM_GPUS * NNODES))

export CUDA_VISIBLE_DEVICES=${GPUS}
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_ASYNC_ERROR_HANDLING=1
export TOKENIZERS_PARALLELISM=false
export OMP_NUM_THREADS=8
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

mkdir -p "${LOG_DIR}"

echo "[$(date)] node ${NODE_RANK}/${NNODES}: ${NUM_GPUS} GPUs (${GPUS}), world size ${WORLD_SIZE}"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv | tee "${LOG_DIR}/gpus_node${NODE_RANK}.csv"

accelerate launch \
    --config_file configs/accelerate_multi_gpu.yaml \
    --num_machines "${NNODES}" \
    --machine_rank "${NODE_RANK}" \
    --main_process_ip "${MASTER_ADDR}" \
    --main_process_port "${MASTER_PORT}" \
    --num_processes "${WORLD_SIZE}" \
    --mixed_precision bf16 \
    train.py \
    --config "${CONFIG}" \
    --log_dir "${LOG_DIR}" \
    --bf16 \
    --num_workers 8 2>&1 | tee "${LOG_DIR}/train_node${NODE_RANK}.log"

echo "[$(date)] finished, best checkpoint in ${LOG_DIR}/best"
