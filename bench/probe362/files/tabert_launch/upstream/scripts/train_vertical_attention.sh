#!/bin/bash
# Pre-train TaBERT (vertical attention, K=3) on the preprocessed CommonCrawl/Wikipedia tables.
# Usage: bash scripts/train_vertical_attention.sh <data_dir> <output_dir>

set -euo pipefail

DATA_DIR=${1:-data/train_data/vertical_tabert}
OUTPUT_DIR=${2:-data/runs/vertical_tabert_base_k3}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
NUM_GPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

mkdir -p "${OUTPUT_DIR}"
cp "$0" "${OUTPUT_DIR}/"

echo "Launching TaBERT pre-training on ${NUM_GPUS} GPUs, output to ${OUTPUT_DIR}"

python -m torch.distributed.launch \
    --nproc_per_node="${NUM_GPUS}" \
    train.py \
    --task vertical_attention \
    --data-dir "${DATA_DIR}" \
    --output-dir "${OUTPUT_DIR}" \
    --table-bert-extra-config '{"base_model_name": "bert-base-uncased", "num_vertical_attention_heads": 6, "num_vertical_layers": 3, "predict_cell_tokens": true}' \
    --train-batch-size 64 \
    --gradient-accumulation-steps 32 \
    --learning-rate 4e-5 \
    --max-epoch 10 \
    --adam-eps 1e-08 \
    --weight-decay 0.01 \
    --fp16 \
    --clip-norm 1.0 \
    --empty-cache-freq 128 \
    2>&1 | tee "${OUTPUT_DIR}/train.log"
