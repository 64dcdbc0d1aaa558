#!/bin/bash
# Train / evaluate the PyTorch LSTM baselines on the four MIMIC-III benchmark tasks.
#
# Usage:  GPU=1 bash scripts/run_torch_baselines.sh [ihm|decomp|los|pheno|all]
#
# Expects the benchmark data to be already generated under data/ (see README, steps 1-6).
set -euo pipefail

TASK=${1:-all}
GPU=${GPU:-0}
OUT=${OUT:-mimic3models}
LOGDIR=logs/torch_$(date +%Y%m%d_%H%M%S)
mkdir -p "$LOGDIR"

export CUDA_VISIBLE_DEVICES=$GPU
export PYTHONPATH=$(pwd):${PYTHONPATH:-}
export OMP_NUM_THREADS=4

echo "Host: $(hostname)   task: $TASK   device: $GPU"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv | tee "$LOGDIR/gpu.csv"

run_ihm() {
    python -um mimic3models.in_hospital_mortality.torch.main \
        --network lstm --dim 16 --timestep 1.0 --depth 2 --dropout 0.3 \
        --mode train --batch_size 8 --epochs 100 \
        --output_dir $OUT/in_hospital_mortality 2>&1 | tee "$LOGDIR/ihm.log"
}

run_decomp() {
    # deep supervision needs ~11 GB of GPU memory with batch 8; use the second card if present
    CUDA_VISIBLE_DEVICES=${DECOMP_GPU:-$GPU} python -um mimic3models.decompensation.torch.main \
        --cuda --network lstm --dim 128 --timestep 1.0 --depth 1 --mode train \
        --batch_size 8 --deep_supervision --epochs 40 \
        --output_dir $OUT/decompensation 2>&1 | tee "$LOGDIR/decomp.log"
}

run_los() {
    python -um mimic3models.length_of_stay.torch.main \
        --cuda --network lstm --dim 64 --timestep 1.0 --depth 1 --dropout 0.3 \
        --mode train --batch_size 8 --partition custom --epochs 40 \
        --output_dir $OUT/length_of_stay 2>&1 | tee "$LOGDIR/los.log"
}

run_pheno() {
    python -um mimic3models.phenotyping.torch.main \
        --cuda --network lstm --dim 256 --timestep 1.0 --depth 1 --dropout 0.3 \
        --mode train --batch_size 8 --epochs 60 \
        --output_dir $OUT/phenotyping 2>&1 | tee "$LOGDIR/pheno.log"
}

case "$TASK" in
    ihm)    run_ihm ;;
    decomp) run_decomp ;;
    los)    run_los ;;
    pheno)  run_pheno ;;
    all)    run_ihm; run_decomp; run_los; run_pheno ;;
    *)      echo "unknown task $TASK"; exit 1 ;;
esac

echo "done, logs in $LOGDIR"
