#!/usr/bin/env bash
# Reproduce the flat / overlapped / discontinuous NER tables.
# One dataset per GPU; each job sees a single card, so --device is always 0.
#
#   bash scripts/run_all.sh            # all datasets
#   bash scripts/run_all.sh cadec      # a single dataset

set -e

DATASETS=${1:-"conll03 ontonotes4 msra resume weibo ace04 ace05 genia cadec share13 share14"}
GPUS=(0 1 2 3 4 5 6 7)
LOG_DIR=./log
mkdir -p ${LOG_DIR} ./outputs ./checkpoints

i=0
for ds in ${DATASETS}; do
    gpu=${GPUS[$((i % ${#GPUS[@]}))]}
    echo "[run_all] ${ds} -> GPU ${gpu}"
    CUDA_VISIBLE_DEVICES=${gpu} nohup python main.py \
        --config ./config/${ds}.json \
        --save_path ./checkpoints/${ds}.pt \
        --predict_path ./outputs/${ds}.json \
        --device 0 > ${LOG_DIR}/${ds}.stdout 2>&1 &
    i=$((i + 1))
    # do not oversubscribe: wait for a batch of 8 jobs
    if (( i % ${#GPUS[@]} == 0 )); then
        wait
    fi
done
wait

echo "[run_all] done; GPU memory at exit:"
nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv

for ds in ${DATASETS}; do
    grep -h "Best TEST F1" ${LOG_DIR}/${ds}_*.txt | tail -n 1 | sed "s/^/${ds}: /"
done
