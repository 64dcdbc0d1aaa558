#!/usr/bin/env bash
# Multi-GPU training of TFNO on Navier-Stokes 128x128.
#
#   bash scripts/launch_ns_ddp.sh                 # all 8 GPUs of this node
#   NGPUS=4 GPU_IDS=0,1,2,3 bash scripts/launch_ns_ddp.sh
#   NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.11 bash scripts/launch_ns_ddp.sh
#
# Each rank binds to cuda:$LOCAL_RANK inside neuralop.training.setup().
set -euo pipefail

NGPUS=${NGPUS:-8}
GPU_IDS=${GPU_IDS:-0,1,2,3,4,5,6,7}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
CONFIG=${CONFIG:-navier_stokes_config.yaml}
RUN_NAME=${RUN_NAME:-tfno_ns128_$(date +%Y%m%d_%H%M%S)}
LOG_DIR=${LOG_DIR:-./logs/${RUN_NAME}}

mkdir -p "${LOG_DIR}"

# restrict the job to the requested GPUs
export CUDA_VISIBLE_DEVICES=${GPU_IDS}

# NCCL: InfiniBand between nodes, fail fast instead of hanging
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-ib0}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0

# avoid oversubscribing the CPU with dataloader workers
export OMP_NUM_THREADS=4
# reduce fragmentation with the large 512x512 test loader
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

echo "[launch] host=$(hostname) node_rank=${NODE_RANK}/${NNODES} gpus=${GPU_IDS}"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | tee "${LOG_DIR}/gpus.csv"

torchrun \
    --nnodes="${NNODES}" \
    --node_rank="${NODE_RANK}" \
    --nproc_per_node="${NGPUS}" \
    --master_addr="${MASTER_ADDR}" \
    --master_port="${MASTER_PORT}" \
    scripts/train_navier_stokes.py \
    --config_file "${CONFIG}" \
    --distributed.use_distributed True \
    --distributed.wireup_info env \
    --distributed.wireup_store tcp \
    --data.num_workers 4 \
    --opt.amp_autocast True \
    --wandb.name "${RUN_NAME}" \
    2>&1 | tee "${LOG_DIR}/train_rank${NODE_RANK}.log"
