#!/usr/bin/env bash
# Launch the distributed OpenAI-ES trainer on one or more GPU nodes.
#
# Single node, 8 GPUs:
#   bash es/launch_es.sh --env brax:ant --popsize 16384
# Two nodes (run on each node, NODE_RANK=0/1, MASTER_ADDR=<node0>):
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 bash es/launch_es.sh --env brax:humanoid
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(dirname "${SCRIPT_DIR}")"
cd "${REPO_DIR}"

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29511}
RUN_NAME=${RUN_NAME:-es_$(date +%Y%m%d_%H%M%S)}
LOG_DIR=${LOG_DIR:-logs/${RUN_NAME}}
mkdir -p "${LOG_DIR}"

# ---- devices / communication ------------------------------------------------
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
export PYTHONPATH="${REPO_DIR}:${PYTHONPATH:-}"

# brax/jax must not grab all GPU memory when used only for env stepping
export XLA_PYTHON_CLIENT_PREALLOCATE=false

echo "[launch_es] node ${NODE_RANK}/${NNODES} master ${MASTER_ADDR}:${MASTER_PORT}"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv | tee "${LOG_DIR}/gpus_node${NODE_RANK}.csv"

torchrun \
  --nnodes="${NNODES}" \
  --node_rank="${NODE_RANK}" \
  --nproc_per_node="${GPUS_PER_NODE}" \
  --master_addr="${MASTER_ADDR}" \
  --master_port="${MASTER_PORT}" \
  es/openai_es_dist.py \
  --backend nccl \
  --out "runs/${RUN_NAME}" \
  "$@" 2>&1 | tee "${LOG_DIR}/train_node${NODE_RANK}.log"
