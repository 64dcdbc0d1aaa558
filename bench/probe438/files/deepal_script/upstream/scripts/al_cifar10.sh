#!/usr/bin/env bash
# Runs every query strategy on CIFAR-10 in parallel, one strategy per GPU.
#
# usage: bash scripts/al_cifar10.sh [n_gpus] [budget]
#
# Each job writes to output/CIFAR10/resnet18/<strategy>_b<budget>/ .

N_GPUS=${1:-4}
BUDGET=${2:-5000}
CFG=../configs/cifar10/al/RESNET18.yaml

STRATEGIES=(random uncertainty entropy margin coreset dbal bald vaal)

cd "$(dirname "$0")/../tools" || exit 1

echo "==== GPU status before launch ===="
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

i=0
for s in "${STRATEGIES[@]}"; do
    gpu=$(( i % N_GPUS ))
    exp="${s}_b${BUDGET}"
    echo "[$(date +%T)] launching ${s} on GPU ${gpu} -> ${exp}"
    CUDA_VISIBLE_DEVICES=${gpu} python train_al.py \
        --cfg ${CFG} \
        --exp-name ${exp} \
        ACTIVE_LEARNING.SAMPLING_FN ${s} \
        ACTIVE_LEARNING.BUDGET_SIZE ${BUDGET} \
        > "../output/${exp}.log" 2>&1 &
    i=$(( i + 1 ))
    # do not put more than two jobs on one card at a time
    if (( i % (2 * N_GPUS) == 0 )); then
        wait
    fi
done
wait

echo "all strategies finished"
