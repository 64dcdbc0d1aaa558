#!/usr/bin/env bash
# Run every Liger-Kernel benchmark script on a single GPU and collect the CSV output.
#
# Usage:
#   bash benchmark/run_benchmarks.sh              # all kernels on GPU 0
#   GPU_ID=3 bash benchmark/run_benchmarks.sh rms_norm swiglu
#
# Results are appended to benchmark/data/all_benchmark_data.csv (see scripts/utils.py).
set -eo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "${SCRIPT_DIR}"

GPU_ID="${GPU_ID:-0}"
export CUDA_VISIBLE_DEVICES="${GPU_ID}"
export CUDA_DEVICE_MAX_CONNECTIONS=1
export PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True"
export TOKENIZERS_PARALLELISM=false
# keep Triton's kernel cache inside the repo so repeated runs skip recompilation
export TRITON_CACHE_DIR="${SCRIPT_DIR}/.triton_cache"

GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "${GPU_ID}" | head -n1 | tr ' ' '_')
DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i "${GPU_ID}" | head -n1)
echo "Benchmarking on ${GPU_NAME} (driver ${DRIVER}), CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES}"

if [ "$#" -gt 0 ]; then
    KERNELS=("$@")
else
    KERNELS=(rms_norm layer_norm swiglu geglu rope cross_entropy fused_linear_cross_entropy kl_div jsd)
fi

LOG_DIR="${SCRIPT_DIR}/logs/${GPU_NAME}"
mkdir -p "${LOG_DIR}"

for k in "${KERNELS[@]}"; do
    script="scripts/benchmark_${k}.py"
    if [ ! -f "${script}" ]; then
        echo "skip ${k}: ${script} not found"
        continue
    fi
    echo "=== ${k} ==="
    python "${script}" --overwrite 2>&1 | tee "${LOG_DIR}/${k}.log"
done

# snapshot of GPU state after the run, useful when numbers look off
nvidia-smi -i "${GPU_ID}" > "${LOG_DIR}/nvidia-smi.txt"
echo "done; logs in ${LOG_DIR}"
