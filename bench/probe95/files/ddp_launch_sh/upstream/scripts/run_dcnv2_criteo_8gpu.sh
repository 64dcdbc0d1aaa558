#!/usr/bin/env bash
# Single-node (or multi-node with NNODES/NODE_RANK/MASTER_ADDR set) DCN-V2 Criteo run.
#
#   bash scripts/run_dcnv2_criteo_8gpu.sh                     # all cards of this box
#   GPUS=0,1,2,3 bash scripts/run_dcnv2_criteo_8gpu.sh        # a subset
#   NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.11 bash scripts/run_dcnv2_criteo_8gpu.sh
#
# Logs go to logs/<run_name>/; GPU utilisation is sampled every 10 s into gpu_util.csv next to them.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(dirname "${SCRIPT_DIR}")"
cd "${REPO_DIR}"

DATA_DIR=${DATA_DIR:-/mnt/data/criteo_parquet}
RUN_NAME=${RUN_NAME:-dcnv2_$(date +%Y%m%d_%H%M%S)}
LOG_DIR=logs/${RUN_NAME}
mkdir -p "${LOG_DIR}"

# ---------------------------------------------------------------- devices
if [[ -n "${GPUS:-}" ]]; then
  export CUDA_VISIBLE_DEVICES=${GPUS}
fi
NUM_GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
if [[ -n "${CUDA_VISIBLE_DEVICES:-}" ]]; then
  NUM_GPUS=$(echo "${CUDA_VISIBLE_DEVICES}" | tr ',' '\n' | wc -l)
fi
echo "using ${NUM_GPUS} GPU(s): ${CUDA_VISIBLE_DEVICES:-all}"

NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

# ---------------------------------------------------------------- comm / runtime env
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_GID_INDEX=3
export GLOO_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1

# ---------------------------------------------------------------- sanity
python - <<'PY'
import torch
assert torch.cuda.is_available(), "no CUDA device visible"
print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())
PY

# ---------------------------------------------------------------- monitoring
nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used,power.draw \
  --format=csv -l 10 > "${LOG_DIR}/gpu_util.csv" &
MON_PID=$!
trap 'kill ${MON_PID} 2>/dev/null || true' EXIT

# ---------------------------------------------------------------- train
torchrun \
  --nnodes="${NNODES}" \
  --node_rank="${NODE_RANK}" \
  --nproc_per_node="${NUM_GPUS}" \
  --master_addr="${MASTER_ADDR}" \
  --master_port="${MASTER_PORT}" \
  train_dcnv2_ddp.py \
    --data "${DATA_DIR}" \
    --out "${LOG_DIR}/ckpt" \
    --batch_size 8192 \
    --embed_dim 16 \
    --cross_layers 3 \
    --mlp 1024,1024,512 \
    --amp \
    --workers 6 \
  2>&1 | tee "${LOG_DIR}/train.log"

echo "done: ${LOG_DIR}"
