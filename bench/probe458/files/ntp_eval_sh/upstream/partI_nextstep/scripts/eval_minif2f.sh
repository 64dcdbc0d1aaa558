#!/bin/bash
# Best-first search on miniF2F, one shard per GPU (8 shards in parallel).
MODEL=${1:-wellecks/llmstep-mathlib4-pythia2.8b}
NUM_SHARDS=8
DATASET=minif2f-test
DATA=data/minif2f.jsonl
OUTPUT_DIR=output/${DATASET}
TEMPERATURES="0.0"
MAX_ITERS=100
NUM_SAMPLES=32

mkdir -p logs
for SHARD in $(seq 0 $((NUM_SHARDS-1))); do
  CUDA_VISIBLE_DEVICES=${SHARD} python ntp_python/proofsearch_dojo.py \
    --dataset-name ${DATASET} \
    --dataset-path ${DATA} \
    --model-name ${MODEL} \
    --temperatures ${TEMPERATURES} \
    --max-iters ${MAX_ITERS} \
    --num-samples ${NUM_SAMPLES} \
    --shard ${SHARD} \
    --num-shards ${NUM_SHARDS} \
    --output-dir ${OUTPUT_DIR} > logs/shard_${SHARD}.log 2>&1 &
done
wait

python ntp_python/aggregate.py --output-dir ${OUTPUT_DIR}
