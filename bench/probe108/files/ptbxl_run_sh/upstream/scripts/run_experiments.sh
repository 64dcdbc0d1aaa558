#!/usr/bin/env bash
# Reproduce the PTB-XL benchmark table: every experiment x every model.
#
#   bash scripts/run_experiments.sh                 # all experiments, GPU 0
#   GPUS=0,1 AMP=1 bash scripts/run_experiments.sh exp0 exp3
#
set -euo pipefail

cd "$(dirname "$0")/.."

DATA=${DATA:-data/ptbxl/}
OUT=${OUT:-output/}
GPUS=${GPUS:-0}
EPOCHS=${EPOCHS:-50}
AMP=${AMP:-0}
EXPERIMENTS=${*:-"exp0 exp1 exp1.1 exp1.1.1 exp2 exp3"}
MODELS="xresnet1d101 resnet1d_wang inception1d"

# fail early on machines without a usable GPU
NGPU_VISIBLE=$(nvidia-smi --list-gpus | wc -l)
if [ "$NGPU_VISIBLE" -lt 1 ]; then
    echo "no GPU found" >&2
    exit 1
fi
export CUDA_VISIBLE_DEVICES=$GPUS
export OMP_NUM_THREADS=8

# download PTB-XL 1.0.3 once
if [ ! -f "$DATA/ptbxl_database.csv" ]; then
    mkdir -p "$DATA"
    wget -r -N -c -np -nH --cut-dirs=4 -P "$DATA" https://physionet.org/files/ptb-xl/1.0.3/
fi

AMP_FLAG=""
if [ "$AMP" = "1" ]; then
    AMP_FLAG="--amp"
fi

for exp in $EXPERIMENTS; do
    for model in $MODELS; do
        echo "=== $exp / $model (gpus: $GPUS) ==="
        python code/train_ptbxl.py \
            --datafolder "$DATA" \
            --outputfolder "$OUT" \
            --experiment "$exp" \
            --model "$model" \
            --epochs "$EPOCHS" \
            --gpu "$GPUS" \
            $AMP_FLAG 2>&1 | tee "$OUT/${exp}_${model}.log"
    done
done

python code/reproduce_results.py --outputfolder "$OUT" --summary
