#!/bin/bash -l
# Continual test-time adaptation on CIFAR10-C (severity 5, 15 corruptions in a row).
# Usage: bash run_cifar10.sh [GPU_ID]
# Runs source / BN adapt / TENT / CoTTA back to back on a single GPU.

export PYTHONPATH=
conda deactivate
conda activate cotta

GPU=${1:-0}
export CUDA_VISIBLE_DEVICES=${GPU}
# uncomment to debug illegal memory accesses in the augmentation pipeline
# export CUDA_LAUNCH_BLOCKING=1

LOGDIR=output/cifar10
mkdir -p ${LOGDIR}

for METHOD in source norm tent cotta; do
    echo "=== [gpu ${GPU}] cifar10c / ${METHOD} ==="
    python cifar10c.py --cfg cfgs/cifar10/${METHOD}.yaml \
        SAVE_DIR ${LOGDIR}/${METHOD} \
        DATA_DIR ./data \
        CKPT_DIR ./ckpt
done

# lifelong / 10-round version for CoTTA only (Table 3 in the paper)
for SEED in 1 2 3; do
    python cifar10c.py --cfg cfgs/10orders/cotta/cotta${SEED}.yaml \
        RNG_SEED ${SEED} SAVE_DIR ${LOGDIR}/cotta_10orders_${SEED}
done
