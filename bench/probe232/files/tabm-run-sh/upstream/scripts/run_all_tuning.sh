#!/usr/bin/env bash
# Launch hyperparameter tuning for every (model, dataset) pair, one job per GPU.
#
#   ./scripts/run_all_tuning.sh tabm-mini "0 1 2 3"
#
# Each job runs `bin/go.py` (tuning + 15 seeds evaluation + ensembling) pinned to a
# single GPU through CUDA_VISIBLE_DEVICES. Logs go to logs/<model>/<dataset>.log
set -euo pipefail

MODEL=${1:-tabm}
GPUS=(${2:-0 1 2 3 4 5 6 7})
N_TRIALS=${N_TRIALS:-100}
PROJECT_DIR=$(cd "$(dirname "$0")/.." && pwd)

DATASETS=(
    adult black-friday california churn covtype2 diamond ecom-offers
    higgs-small house maps-routing microsoft otto sberbank-housing
    weather cooking-time delivery-eta homesite-insurance
)

cd "$PROJECT_DIR"
source "$(conda info --base)/etc/profile.d/conda.sh"
conda activate tabm

export PYTHONPATH="$PROJECT_DIR:${PYTHONPATH:-}"
export OMP_NUM_THREADS=4
export CUBLAS_WORKSPACE_CONFIG=:4096:8   # deterministic cuBLAS
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

mkdir -p "logs/$MODEL"

gpu_is_free() {
    # A GPU is free when no compute process is running on it.
    local gpu=$1
    local n
    n=$(nvidia-smi --id="$gpu" --query-compute-apps=pid --format=csv,noheader | wc -l)
    [[ "$n" -eq 0 ]]
}

wait_for_free_gpu() {
    while true; do
        for gpu in "${GPUS[@]}"; do
            if gpu_is_free "$gpu"; then
                echo "$gpu"
                return
            fi
        done
        sleep 30
    done
}

for dataset in "${DATASETS[@]}"; do
    exp_dir="exp/$MODEL/$dataset/0-tuning"
    if [[ -f "$exp_dir/DONE" ]]; then
        echo "skip $exp_dir"
        continue
    fi
    gpu=$(wait_for_free_gpu)
    echo "[$(date +%T)] $MODEL/$dataset -> GPU $gpu"
    CUDA_VISIBLE_DEVICES=$gpu nohup python bin/go.py "$exp_dir" \
        --n-trials "$N_TRIALS" --continue \
        > "logs/$MODEL/$dataset.log" 2>&1 &
    sleep 60   # give the job time to allocate memory before polling nvidia-smi again
done

wait
echo "all jobs finished"
nvidia-smi --query-gpu=index,memory.used,utilization.gpu --format=csv
