#!/usr/bin/env bash
# Reproduce the DVS128 Gesture / CIFAR10-DVS results of the PLIF paper with the activation_based API.
# Tested on a single RTX 3090 (24 GB); with T=16 and -b 16 peak memory is ~9 GB when -amp and -cupy are on.
#
# usage: bash scripts/train_dvsg.sh [dvsg|cifar10dvs|all]

set -e

export CUDA_VISIBLE_DEVICES=0
export OMP_NUM_THREADS=8

DVSG_ROOT=/datasets/DVS128Gesture
C10DVS_ROOT=/datasets/CIFAR10DVS
OUT_ROOT=./logs/plif

TASK=${1:-all}

run_dvsg() {
    # frames are integrated with split_by='number', 16 frames per sample
    python -m spikingjelly.activation_based.examples.classify_dvsg \
        -T 16 -device cuda:0 -b 16 -epochs 64 \
        -data-dir ${DVSG_ROOT} -amp -cupy -opt adam -lr 0.001 -j 8 \
        -out-dir ${OUT_ROOT}/dvsg
}

run_cifar10dvs() {
    # CIFAR10-DVS has no official split; the example uses a 9:1 split per class
    python -m spikingjelly.activation_based.examples.classify_cifar10dvs \
        -T 10 -device cuda:0 -b 32 -epochs 200 \
        -data-dir ${C10DVS_ROOT} -amp -cupy -opt sgd -lr 0.1 -momentum 0.9 -j 16 \
        -out-dir ${OUT_ROOT}/cifar10dvs
}

mkdir -p ${OUT_ROOT}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > ${OUT_ROOT}/gpu_info.csv || true

case ${TASK} in
    dvsg) run_dvsg ;;
    cifar10dvs) run_cifar10dvs ;;
    all) run_dvsg; run_cifar10dvs ;;
    *) echo "unknown task ${TASK}"; exit 1 ;;
esac
