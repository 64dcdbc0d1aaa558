#!/usr/bin/env bash
# Multi-node launcher for the LightningCLI ImageNet example.
#
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.11 bash scripts/train_multinode.sh configs/resnet50_ddp_8gpu.yaml
#
# Lightning's TorchElastic/LightningEnvironment picks up MASTER_ADDR/MASTER_PORT/NODE_RANK from the env.
set -euo pipefail

CONFIG=${1:-configs/resnet50_ddp_8gpu.yaml}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
DATA_PATH=${DATA_PATH:-/datasets/imagenet}
LOG_DIR=${LOG_DIR:-./logs}

mkdir -p "${LOG_DIR}"

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export CUDA_DEVICE_MAX_CONNECTIONS=1

# NCCL over InfiniBand; eth0 is the management network
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=ib0
export NCCL_IB_DISABLE=0
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_IB_GID_INDEX=3
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_DISTRIBUTED_DEBUG=${TORCH_DISTRIBUTED_DEBUG:-OFF}

export OMP_NUM_THREADS=8
export PYTHONUNBUFFERED=1

echo "[$(hostname)] node ${NODE_RANK}/${NNODES}, master ${MASTER_ADDR}:${MASTER_PORT}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

export MASTER_ADDR MASTER_PORT NODE_RANK
export WORLD_SIZE=$((NNODES * GPUS_PER_NODE))

python examples/pytorch/domain_templates/imagenet.py fit \
    --config "${CONFIG}" \
    --trainer.num_nodes "${NNODES}" \
    --trainer.devices "${GPUS_PER_NODE}" \
    --model.data_path "${DATA_PATH}" \
    2>&1 | tee "${LOG_DIR}/train_node${NODE_RANK}.log"
