#!/usr/bin/env bash
# Pre-train W2V+CMSC+RLM on PhysioNet 2021 (12-lead, 500Hz, 5s crops)
# Usage: bash pretrain_w2v_cmsc_rlm.sh /path/to/manifest /path/to/output
set -euo pipefail

MANIFEST_DIR=${1:?"manifest dir required"}
OUTPUT_DIR=${2:-./outputs/w2v_cmsc_rlm}
FAIRSEQ_SIGNALS_ROOT=$(cd "$(dirname "$0")/../../.." && pwd)

# 4 x V100 (32GB); lower dataset.batch_size if you have less memory per GPU
export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

NUM_GPUS=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)

mkdir -p "$OUTPUT_DIR"

nvidia-smi --query-gpu=index,name,memory.total --format=csv | tee "$OUTPUT_DIR/gpus.csv"

fairseq-hydra-train \
    task.data="$MANIFEST_DIR/cmsc" \
    checkpoint.save_dir="$OUTPUT_DIR/checkpoints" \
    common.log_file="$OUTPUT_DIR/train.log" \
    distributed_training.distributed_world_size=$NUM_GPUS \
    distributed_training.find_unused_parameters=true \
    --config-dir "$FAIRSEQ_SIGNALS_ROOT/examples/w2v_cmsc/config/pretraining" \
    --config-name w2v_cmsc_rlm
