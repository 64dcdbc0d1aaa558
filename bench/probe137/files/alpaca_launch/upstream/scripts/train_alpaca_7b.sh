#!/usr/bin/env bash
# Fine-tune LLaMA-7B on the 52K Alpaca data with FSDP.
# Hardware: one node with 4x A100 80GB (NVLink). Takes ~3h for 3 epochs.
#
# usage: bash scripts/train_alpaca_7b.sh /path/to/llama-7b-hf output/alpaca-7b
set -euo pipefail

MODEL_PATH=${1:-/data/models/llama-7b-hf}
OUTPUT_DIR=${2:-output/alpaca-7b}
DATA_PATH=${DATA_PATH:-./alpaca_data.json}
NPROC=${NPROC:-4}
PORT=${PORT:-29500}

export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3}
export WANDB_PROJECT=alpaca-repro
export TOKENIZERS_PARALLELISM=false

mkdir -p "${OUTPUT_DIR}"

torchrun --nproc_per_node=${NPROC} --master_port=${PORT} train.py \
    --model_name_or_path "${MODEL_PATH}" \
    --data_path "${DATA_PATH}" \
    --bf16 True \
    --output_dir "${OUTPUT_DIR}" \
    --num_train_epochs 3 \
    --per_device_train_batch_size 4 \
    --per_device_eval_batch_size 4 \
    --gradient_accumulation_steps 8 \
    --evaluation_strategy "no" \
    --save_strategy "steps" \
    --save_steps 2000 \
    --save_total_limit 1 \
    --learning_rate 2e-5 \
    --weight_decay 0. \
    --warmup_ratio 0.03 \
    --lr_scheduler_type "cosine" \
    --logging_steps 1 \
    --fsdp "full_shard auto_wrap" \
    --fsdp_transformer_layer_cls_to_wrap 'LlamaDecoderLayer' \
    --tf32 True \
    --report_to wandb 2>&1 | tee "${OUTPUT_DIR}/train.log"
