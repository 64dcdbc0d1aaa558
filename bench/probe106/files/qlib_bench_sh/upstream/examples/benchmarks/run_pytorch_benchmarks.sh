#!/usr/bin/env bash
# Run the PyTorch-based Qlib benchmarks one after another on a single GPU.
#
#   bash run_pytorch_benchmarks.sh [gpu_id] [market] [models...]
#
# Every workflow_config_*.yaml keeps `GPU: 0`; the card is picked by masking the
# visible devices below so several copies of this script can share one server.
set -euo pipefail

GPU_ID=${1:-0}
MARKET=${2:-csi300}
shift $(( $# > 2 ? 2 : $# ))
MODELS=("$@")
if [ ${#MODELS[@]} -eq 0 ]; then
    MODELS=(LSTM GRU ALSTM GATs HIST TRA Transformer Localformer)
fi

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
QLIB_DATA=${QLIB_DATA:-$HOME/.qlib/qlib_data/cn_data}
LOG_DIR=${LOG_DIR:-${BENCH_DIR}/logs/${MARKET}_$(date +%Y%m%d_%H%M%S)}
mkdir -p "${LOG_DIR}"

export CUDA_VISIBLE_DEVICES=${GPU_ID}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
export MKL_NUM_THREADS=${MKL_NUM_THREADS:-8}
# qlib's joblib workers inherit this; keeps MLflow runs of parallel copies apart
export MLFLOW_TRACKING_URI=${MLFLOW_TRACKING_URI:-file://${LOG_DIR}/mlruns}

if [ ! -d "${QLIB_DATA}" ]; then
    echo "qlib data not found in ${QLIB_DATA}, downloading..."
    python -m qlib.run.get_data qlib_data --target_dir "${QLIB_DATA}" --region cn
fi

echo "== device status before run (gpu ${GPU_ID}) =="
nvidia-smi --query-gpu=index,name,memory.used,memory.total,utilization.gpu --format=csv

# background utilisation trace, one sample every 30 s
nvidia-smi dmon -s um -d 30 > "${LOG_DIR}/gpu_util.log" 2>&1 &
MON_PID=$!
trap 'kill ${MON_PID} 2>/dev/null || true' EXIT

python - <<PY
import torch
print("torch", torch.__version__, "| cuda", torch.version.cuda, "| visible", torch.cuda.device_count())
PY

run_one() {
    local model=$1
    local cfg=$2
    local name
    name=$(basename "${cfg}" .yaml)
    echo ">>> [${model}] ${name}"
    local start=$(date +%s)
    (
        cd "${BENCH_DIR}/${model}"
        if [ -f requirements.txt ]; then
            pip install -q -r requirements.txt
        fi
        qrun "${cfg}"
    ) > "${LOG_DIR}/${model}_${name}.log" 2>&1 || {
        echo "!!! ${model} ${name} failed, see ${LOG_DIR}/${model}_${name}.log"
        return 0
    }
    local end=$(date +%s)
    echo "    done in $(( end - start ))s"
}

for model in "${MODELS[@]}"; do
    if [ ! -d "${BENCH_DIR}/${model}" ]; then
        echo "skip unknown model ${model}"
        continue
    fi
    for cfg in "${BENCH_DIR}/${model}"/workflow_config_*"${MARKET#csi}"*.yaml "${BENCH_DIR}/${model}"/workflow_config_*Alpha158*.yaml; do
        [ -f "${cfg}" ] || continue
        run_one "${model}" "${cfg}"
        # give the driver a moment to release memory held by dataloader workers
        sleep 5
    done
done

python "${BENCH_DIR}/../../scripts/collect_info.py" --log_dir "${LOG_DIR}" --out "${LOG_DIR}/summary.csv" || true
echo "all done, results in ${LOG_DIR}"
