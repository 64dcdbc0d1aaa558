#!/usr/bin/env bash
# Multi-GPU (DistributedDataParallel) training of the session-based XLNet model.
#
# Usage:
#   bash scripts/run_ddp.sh <num_gpus> [extra args passed to t4rec_paper_experiments/run.py]
#
# Each process gets one GPU; the merlin dataloader partitions the parquet files by
# rank (global_rank / global_size), so the number of parquet row groups must be a
# multiple of the number of GPUs.

set -euo pipefail

NUM_GPUS=${1:-2}
shift || true

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT_DIR="$(dirname "${SCRIPT_DIR}")"

DATA_DIR=${DATA_DIR:-/workspace/data/sessions_by_day}
OUTPUT_DIR=${OUTPUT_DIR:-/workspace/outputs/xlnet_ddp}
mkdir -p "${OUTPUT_DIR}"

# GPUs 0..NUM_GPUS-1
GPU_LIST=$(seq -s, 0 $((NUM_GPUS - 1)))
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$GPU_LIST}

# NCCL settings that helped on DGX-1 (no NVLink between all pairs)
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_P2P_LEVEL=NVL
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4
export TOKENIZERS_PARALLELISM=false

echo "Running on GPUs: ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

MASTER_PORT=${MASTER_PORT:-29512}

torchrun --nproc_per_node="${NUM_GPUS}" --master_port="${MASTER_PORT}" \
    "${ROOT_DIR}/t4rec_paper_experiments/run.py" \
    --output_dir "${OUTPUT_DIR}" \
    --overwrite_output_dir \
    --do_train \
    --do_eval \
    --data_path "${DATA_DIR}" \
    --start_time_window_index 1 \
    --final_time_window_index 15 \
    --time_window_folder_pad_digits 4 \
    --model_type xlnet \
    --loss_type cross_entropy \
    --per_device_eval_batch_size 512 \
    --data_loader_engine merlin \
    --d_model 320 \
    --n_layer 2 \
    --n_head 8 \
    --dropout 0.1 \
    --learning_rate 0.000666 \
    --similarity_type concat_mlp \
    --num_train_epochs 10 \
    --input_features_aggregation concat \
    --per_device_train_batch_size 192 \
    --mlm \
    --mlm_probability 0.3 \
    --fp16 \
    --ddp_backend nccl \
    --dataloader_drop_last \
    --report_to none \
    "$@" 2>&1 | tee "${OUTPUT_DIR}/train.log"

echo "Done. Logs in ${OUTPUT_DIR}/train.log"
