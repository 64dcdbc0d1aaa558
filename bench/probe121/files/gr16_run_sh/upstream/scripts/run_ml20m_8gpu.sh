#!/usr/bin/env bash
# Reproduces the ML-20M HSTU-large numbers on a single 8-GPU host.
#
#   bash scripts/run_ml20m_8gpu.sh [gin_config]
#   GPUS=4,5,6,7 bash scripts/run_ml20m_8gpu.sh      # run on a subset of the GPUs
#
# Logs go to ./logs/<config>-<date>.log, tensorboard events to ./exps/.
set -euo pipefail

CONFIG=${1:-configs/ml-20m/hstu-sampled-softmax-n128-large-final.gin}
GPUS=${GPUS:-0,1,2,3,4,5,6,7}
NUM_GPUS=$(echo "${GPUS}" | tr ',' '\n' | wc -l)
MASTER_PORT=${MASTER_PORT:-12355}

cd "$(dirname "$0")/.."

# ---------------------------------------------------------------------------
# environment
# ---------------------------------------------------------------------------
if [[ -f "${HOME}/miniconda3/etc/profile.d/conda.sh" ]]; then
  # shellcheck disable=SC1091
  source "${HOME}/miniconda3/etc/profile.d/conda.sh"
  conda activate gr
fi

export PYTHONPATH="$(pwd):${PYTHONPATH:-}"
export OMP_NUM_THREADS=4
export CUDA_VISIBLE_DEVICES=${GPUS}
export NCCL_DEBUG=WARN
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_BLOCKING_WAIT=0
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
# uncomment to debug illegal memory accesses in the jagged kernels
# export CUDA_LAUNCH_BLOCKING=1
export TRITON_CACHE_DIR="${TRITON_CACHE_DIR:-/tmp/triton_cache_${USER}}"

# ---------------------------------------------------------------------------
# sanity checks
# ---------------------------------------------------------------------------
VISIBLE=$(python3 -c "import torch; print(torch.cuda.device_count())")
if [[ "${VISIBLE}" -lt "${NUM_GPUS}" ]]; then
  echo "requested ${NUM_GPUS} GPUs but only ${VISIBLE} visible" >&2
  exit 1
fi
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

if [[ ! -d tmp/ml-20m ]]; then
  echo "preprocessing MovieLens-20M ..."
  python3 preprocess_public_data.py --dataset ml-20m
fi

mkdir -p logs
STAMP=$(date +%Y%m%d-%H%M%S)
LOG="logs/$(basename "${CONFIG}" .gin)-${STAMP}.log"

echo "config=${CONFIG} gpus=${NUM_GPUS} port=${MASTER_PORT} log=${LOG}"
python3 main.py \
  --gin_config_file="${CONFIG}" \
  --master_port="${MASTER_PORT}" \
  --num_gpus="${NUM_GPUS}" 2>&1 | tee "${LOG}"
