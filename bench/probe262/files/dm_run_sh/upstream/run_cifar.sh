#!/usr/bin/env bash
# Reproduce the CIFAR-10/100 tables of DivideMix.
# One run per GPU; runs are launched in the background and logged to ./logs.
#
# usage: bash run_cifar.sh /path/to/cifar-10-batches-py /path/to/cifar-100-python

set -e

CIFAR10_DIR=${1:-./cifar-10}
CIFAR100_DIR=${2:-./cifar-100}
NUM_GPUS=${NUM_GPUS:-4}

mkdir -p logs checkpoint

gpu=0
launch() {
    # $1 dataset, $2 data dir, $3 noise mode, $4 noise ratio, $5 lambda_u, $6 p_threshold
    local tag="$1_$3_$4"
    echo "[$(date +%H:%M:%S)] ${tag} -> GPU ${gpu}"
    CUDA_VISIBLE_DEVICES=${gpu} nohup python Train_cifar.py \
        --dataset "$1" --data_path "$2" --num_class "$( [ "$1" = cifar10 ] && echo 10 || echo 100 )" \
        --noise_mode "$3" --r "$4" --lambda_u "$5" --p_threshold "$6" \
        --gpuid 0 --id "${tag}" > "logs/${tag}.log" 2>&1 &
    gpu=$(( (gpu + 1) % NUM_GPUS ))
    if [ "${gpu}" -eq 0 ]; then
        wait
    fi
}

# CIFAR-10, symmetric noise
launch cifar10 "${CIFAR10_DIR}" sym 0.2 0 0.5
launch cifar10 "${CIFAR10_DIR}" sym 0.5 25 0.5
launch cifar10 "${CIFAR10_DIR}" sym 0.8 25 0.5
launch cifar10 "${CIFAR10_DIR}" sym 0.9 50 0.6
# CIFAR-10, asymmetric noise
launch cifar10 "${CIFAR10_DIR}" asym 0.4 0 0.5

# CIFAR-100, symmetric noise
launch cifar100 "${CIFAR100_DIR}" sym 0.2 25 0.5
launch cifar100 "${CIFAR100_DIR}" sym 0.5 150 0.5
launch cifar100 "${CIFAR100_DIR}" sym 0.8 150 0.5
launch cifar100 "${CIFAR100_DIR}" sym 0.9 150 0.6

wait
nvidia-smi --query-gpu=index,memory.used --format=csv
echo "all runs finished"
