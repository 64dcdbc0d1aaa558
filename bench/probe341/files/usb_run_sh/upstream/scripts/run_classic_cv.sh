#!/usr/bin/env bash
# Reproduce the classic-CV table (CIFAR-10/100, SVHN, STL-10) for one algorithm.
#
# Usage: bash scripts/run_classic_cv.sh <algorithm> <gpu ids, comma separated> [seeds]
#   e.g. bash scripts/run_classic_cv.sh flexmatch 0,1 "0 1 2"
set -e

ALG=${1:-fixmatch}
GPUS=${2:-0}
SEEDS=${3:-"0 1 2"}

export CUDA_VISIBLE_DEVICES=${GPUS}
export OMP_NUM_THREADS=4
NUM_GPUS=$(echo ${GPUS} | awk -F, '{print NF}')

echo "[run_classic_cv] algorithm=${ALG} gpus=${GPUS} (${NUM_GPUS} devices) seeds=${SEEDS}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

declare -A LABELS
LABELS[cifar10]="40 250 4000"
LABELS[cifar100]="400 2500 10000"
LABELS[svhn]="40 250 1000"
LABELS[stl10]="40 250 1000"

mkdir -p logs/classic_cv/${ALG}

for ds in cifar10 cifar100 svhn stl10; do
    for nl in ${LABELS[$ds]}; do
        for seed in ${SEEDS}; do
            cfg=config/classic_cv/${ALG}/${ALG}_${ds}_${nl}_${seed}.yaml
            if [ ! -f "${cfg}" ]; then
                echo "skip missing config ${cfg}"
                continue
            fi
            log=logs/classic_cv/${ALG}/${ALG}_${ds}_${nl}_${seed}.log
            echo "==> ${cfg}"
            python train.py --c ${cfg} 2>&1 | tee ${log}
        done
    done
done

echo "[run_classic_cv] done"
