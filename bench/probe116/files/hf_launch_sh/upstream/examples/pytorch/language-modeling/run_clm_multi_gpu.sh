#!/usr/bin/env bash
# Copyright 2023 The HuggingFace Team. All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
#
# Fine-tune a causal LM (GPT-2 by default) on wikitext-2 with DDP on one node.
#
# Usage:
#   bash run_clm_multi_gpu.sh [NUM_GPUS] [extra run_clm.py args...]
#
# Tested on 8x A100 40GB. With fp16 and a per-device batch size of 8 an epoch
# of wikitext-2-raw-v1 takes ~4 minutes.

set -euo pipefail

NUM_GPUS=${1:-8}
shift || true

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=INFO
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=1
export TOKENIZERS_PARALLELISM=false

MODEL=${MODEL:-gpt2}
DATASET=${DATASET:-wikitext}
DATASET_CONFIG=${DATASET_CONFIG:-wikitext-2-raw-v1}
OUTPUT_DIR=${OUTPUT_DIR:-/tmp/test-clm}
PER_DEVICE_BS=${PER_DEVICE_BS:-8}
MASTER_PORT=${MASTER_PORT:-29500}

echo "Launching ${NUM_GPUS} processes for ${MODEL} -> ${OUTPUT_DIR}"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

python -m torch.distributed.launch \
    --nproc_per_node "${NUM_GPUS}" \
    --master_port "${MASTER_PORT}" \
    run_clm.py \
    --model_name_or_path "${MODEL}" \
    --dataset_name "${DATASET}" \
    --dataset_config_name "${DATASET_CONFIG}" \
    --per_device_train_batch_size "${PER_DEVICE_BS}" \
    --per_device_eval_batch_size "${PER_DEVICE_BS}" \
    --do_train \
    --do_eval \
    --fp16 \
    --half_precision_backend cuda_amp \
    --ddp_backend nccl \
    --ddp_timeout 3600 \
    --dataloader_num_workers 4 \
    --logging_steps 50 \
    --save_strategy no \
    --report_to none \
    --overwrite_output_dir \
    --output_dir "${OUTPUT_DIR}" \
    "$@"

echo "Done. Eval results:"
cat "${OUTPUT_DIR}/eval_results.json"
