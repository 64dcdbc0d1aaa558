#!/usr/bin/env bash
# Train / evaluate AASIST and AASIST-L on ASVspoof 2019 LA.
#
# Usage:
#   bash scripts/run_all.sh <gpu_id> [stage]
#
#   stage 0: download LA database (skipped when ./LA exists)
#   stage 1: train AASIST
#   stage 2: train AASIST-L
#   stage 3: evaluate the released pre-trained models
#
# Every experiment runs on a single GPU (~8 GB for AASIST with batch 24);
# pass the GPU index as the first argument.

set -euo pipefail

GPU_ID=${1:-0}
STAGE=${2:-0}
SEEDS="1234 2345 3456"
EXP_ROOT=./exp_result
LOG_DIR=./logs
mkdir -p "${LOG_DIR}"

export CUDA_VISIBLE_DEVICES=${GPU_ID}
export OMP_NUM_THREADS=4
export PYTHONUNBUFFERED=1

echo "[$(date)] host=$(hostname) gpu=${GPU_ID} stage=${STAGE}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

if [ "${STAGE}" -le 0 ]; then
    if [ ! -d ./LA ]; then
        python download_dataset.py
    else
        echo "LA database found, skipping download"
    fi
fi

if [ "${STAGE}" -le 1 ]; then
    for seed in ${SEEDS}; do
        python main.py --config ./config/AASIST.conf \
            --output_dir "${EXP_ROOT}" \
            --seed "${seed}" \
            --comment "seed${seed}" 2>&1 | tee "${LOG_DIR}/aasist_seed${seed}.log"
    done
fi

if [ "${STAGE}" -le 2 ]; then
    for seed in ${SEEDS}; do
        python main.py --config ./config/AASIST-L.conf \
            --output_dir "${EXP_ROOT}" \
            --seed "${seed}" \
            --comment "seed${seed}" 2>&1 | tee "${LOG_DIR}/aasist_l_seed${seed}.log"
    done
fi

if [ "${STAGE}" -le 3 ]; then
    python main.py --eval --config ./config/AASIST.conf 2>&1 | tee "${LOG_DIR}/eval_aasist.log"
    python main.py --eval --config ./config/AASIST-L.conf 2>&1 | tee "${LOG_DIR}/eval_aasist_l.log"
fi

# summary of EER / min t-DCF over seeds
grep -h "Exp FIN" "${LOG_DIR}"/*.log || true
echo "[$(date)] done"
