#!/bin/bash
# Single-node multi-GPU offline training with torch DDP.
#
#   NUM_GPUS=4 bash examples/run_distributed.sh --dataset hopper-medium-v2 --algo cql
#
set -euo pipefail

NUM_GPUS=${NUM_GPUS:-4}
MASTER_PORT=${MASTER_PORT:-29400}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
# P2P over PCIe hangs on some of our consumer cards; NVLink boxes can drop this
export NCCL_P2P_DISABLE=1
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=4

echo "launching ${NUM_GPUS} workers on GPUs ${CUDA_VISIBLE_DEVICES}"

torchrun \
    --nnodes=1 \
    --nproc_per_node=${NUM_GPUS} \
    --rdzv_id=100 \
    --rdzv_backend=c10d \
    --rdzv_endpoint=localhost:${MASTER_PORT} \
    examples/distributed_offline_training.py "$@"
