#!/bin/bash
# Validate a list of pretrained timm models on ImageNet-1k val and write a results csv.
# Runs on a single GPU; pick it with GPU=<idx> (default 0).
#
#   GPU=1 ./scripts/bulk_validate.sh models_to_check.txt results/in1k_val.csv
#
set -e

MODEL_LIST=${1:-models_to_check.txt}
RESULTS=${2:-results/in1k_val_$(date +%Y%m%d).csv}
GPU=${GPU:-0}
BATCH=${BATCH:-256}
DATA_DIR=${DATA_DIR:-/datasets/imagenet}

mkdir -p "$(dirname "$RESULTS")"

# pin cuda device for this run, torch sees it as cuda:0
export CUDA_VISIBLE_DEVICES=$GPU

python validate.py \
    --data-dir "$DATA_DIR" \
    --model "$MODEL_LIST" \
    --pretrained \
    --batch-size "$BATCH" \
    --amp --amp-dtype bfloat16 \
    --channels-last \
    --pin-mem \
    --device cuda:0 \
    --results-file "$RESULTS" \
    --retry

echo "results written to $RESULTS"
