#!/usr/bin/env bash
# Automatic process annotation for Math-Shepherd (GSM8K + MATH train sets).
#   1) generator samples 15 solutions per question (vLLM, one engine per GPU)
#   2) completer rolls out N=8 continuations from every step prefix
#   3) hard / soft step labels
set -euo pipefail

GENERATOR=${GENERATOR:-"peiyi9979/mistral-7b-sft"}
COMPLETER=${COMPLETER:-"peiyi9979/mistral-7b-sft"}
DATA_DIR=${DATA_DIR:-"data"}
OUT_DIR=${OUT_DIR:-"outputs/annotation"}
NUM_SOLUTIONS=15
NUM_COMPLETIONS=8

NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "found ${NUM_GPUS} GPUs"
mkdir -p ${OUT_DIR}/shards

for DATASET in gsm8k math; do
    # ---- stage 0: generator solutions, one shard per GPU --------------------------------------
    for ((i = 0; i < NUM_GPUS; i++)); do
        CUDA_VISIBLE_DEVICES=$i python -m generation.sample_solutions \
            --model ${GENERATOR} \
            --input ${DATA_DIR}/${DATASET}/train.jsonl \
            --output ${OUT_DIR}/shards/${DATASET}_solutions_${i}.jsonl \
            --num_samples ${NUM_SOLUTIONS} \
            --shard_id $i --num_shards ${NUM_GPUS} \
            --temperature 0.8 &
    done
    wait
    cat ${OUT_DIR}/shards/${DATASET}_solutions_*.jsonl > ${OUT_DIR}/${DATASET}_solutions.jsonl

    # ---- stage 1: completions from every step prefix (spawns its own per-GPU workers) ----------
    python -m annotation.sample_completions \
        --completer ${COMPLETER} \
        --input ${OUT_DIR}/${DATASET}_solutions.jsonl \
        --output ${OUT_DIR}/${DATASET}_rollouts.jsonl \
        --num_completions ${NUM_COMPLETIONS} \
        --num_gpus ${NUM_GPUS} \
        --gpu_memory_utilization 0.9

    # ---- stage 2: labels ---------------------------------------------------------------------
    python -m annotation.assign_labels \
        --rollouts ${OUT_DIR}/${DATASET}_rollouts.jsonl \
        --solutions ${OUT_DIR}/${DATASET}_solutions.jsonl \
        --output ${OUT_DIR}/${DATASET}_prm_hard.jsonl \
        --dataset ${DATASET} --mode hard
    python -m annotation.assign_labels \
        --rollouts ${OUT_DIR}/${DATASET}_rollouts.jsonl \
        --solutions ${OUT_DIR}/${DATASET}_solutions.jsonl \
        --output ${OUT_DIR}/${DATASET}_prm_soft.jsonl \
        --dataset ${DATASET} --mode soft
done

cat ${OUT_DIR}/gsm8k_prm_hard.jsonl ${OUT_DIR}/math_prm_hard.jsonl | shuf --random-source=<(yes) > ${OUT_DIR}/math_shepherd_hard.jsonl
echo "done: ${OUT_DIR}/math_shepherd_hard.jsonl"
