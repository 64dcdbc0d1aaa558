#!/usr/bin/env bash
# Run the full PyGOD benchmark (all detectors x all datasets).
# Usage: bash run_all.sh [num_trial]
# Each job is pinned to the GPU that currently has the most free memory.

set -e

NUM_TRIAL=${1:-20}
OUT=results/benchmark_$(date +%Y%m%d).csv

MODELS="lof if scan radar anomalous mlpae gcnae dominant done adone anomalydae gaan guide conad"
DATASETS="inj_cora inj_amazon inj_flickr weibo reddit disney books enron"

pick_gpu() {
    nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits \
        | nl -v 0 | sort -k2 -nr | head -n 1 | awk '{print $1}'
}

mkdir -p results logs

for data in $DATASETS; do
    for model in $MODELS; do
        gpu=$(pick_gpu)
        echo "[$(date +%T)] $model on $data -> GPU $gpu"
        CUDA_VISIBLE_DEVICES=$gpu python main.py \
            --model "$model" \
            --dataset "$data" \
            --gpu 0 \
            --num_trial "$NUM_TRIAL" \
            --output "$OUT" > "logs/${model}_${data}.log" 2>&1 || \
            echo "  failed, see logs/${model}_${data}.log"
    done
done

echo "done: $OUT"
