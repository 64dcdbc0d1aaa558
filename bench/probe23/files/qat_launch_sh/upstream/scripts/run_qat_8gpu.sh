#!/usr/bin/env bash
# Multi-GPU QAT / distillation launcher (single node, 8 GPUs by default).
#
#   bash scripts/run_qat_8gpu.sh configs/qat/mobilenetv2.yaml [extra args]
#
set -euo pipefail

CONFIG=${1:?usage: run_qat_8gpu.sh CONFIG [args]}
shift || true
NGPUS=${NGPUS:-8}
MASTER_PORT=${MASTER_PORT:-29500}
RUN_NAME=$(basename "${CONFIG}" .yaml)_$(date +%Y%m%d_%H%M%S)
LOG_DIR=logs/${RUN_NAME}
mkdir -p "${LOG_DIR}"

# --- devices ---------------------------------------------------------------
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((NGPUS - 1)))}
export CUDA_DEVICE_MAX_CONNECTIONS=1

# --- NCCL ------------------------------------------------------------------
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0

# --- misc ------------------------------------------------------------------
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512
export PYTHONPATH=$(pwd):${PYTHONPATH:-}

echo "[$(date)] launching ${RUN_NAME} on ${NGPUS} GPUs (${CUDA_VISIBLE_DEVICES})"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv | tee "${LOG_DIR}/gpus.csv"

# record the environment for reproducibility
{
  python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  python -c "import torch; print('devices', torch.cuda.device_count())"
  pip freeze
} > "${LOG_DIR}/env.txt" 2>&1

torchrun --standalone \
    --nproc_per_node="${NGPUS}" \
    --master_port="${MASTER_PORT}" \
    tools/train.py \
    --config "${CONFIG}" \
    --output-dir "${LOG_DIR}" \
    --dist-backend nccl \
    "$@" 2>&1 | tee "${LOG_DIR}/train.log"

status=${PIPESTATUS[0]}
echo "[$(date)] finished with status ${status}"
exit "${status}"
