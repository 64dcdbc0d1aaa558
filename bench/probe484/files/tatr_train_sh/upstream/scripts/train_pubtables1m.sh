#!/usr/bin/env bash
# Train TATR on PubTables-1M (structure recognition by default).
#
#   bash scripts/train_pubtables1m.sh structure /data/pubtables1m/PubTables-1M-Structure
#   bash scripts/train_pubtables1m.sh detection /data/pubtables1m/PubTables-1M-Detection
#
# Uses a single GPU; pick it with GPU_ID (default 0).
set -euo pipefail

TASK=${1:-structure}
DATA_ROOT=${2:?"usage: $0 <structure|detection> <data_root_dir> [extra args]"}
shift 2 || true

GPU_ID=${GPU_ID:-0}
OUT_DIR=${OUT_DIR:-output/${TASK}_$(date +%Y%m%d_%H%M)}
mkdir -p "${OUT_DIR}"

cd "$(dirname "$0")/../src"

nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

export CUDA_VISIBLE_DEVICES=${GPU_ID}
python main.py \
    --data_type "${TASK}" \
    --config_file "${TASK}_config.json" \
    --data_root_dir "${DATA_ROOT}" \
    --model_save_dir "${OUT_DIR}" \
    --mode train "$@" 2>&1 | tee "${OUT_DIR}/train.log"
