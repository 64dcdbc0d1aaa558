#!/usr/bin/env bash
# Train the Table Transformer structure-recognition model on PubTables-1M.
# Detection runs on GPUs 0-3 (see train_detection.sh); this job takes the other half of the node.
set -euo pipefail

DATA_ROOT=${DATA_ROOT:-/data/pubtables-1m/PubTables-1M-Structure}
OUT_DIR=${OUT_DIR:-./output/structure}
mkdir -p "${OUT_DIR}"

export CUDA_VISIBLE_DEVICES=4,5,6,7
export OMP_NUM_THREADS=8

cd src
python main.py \
    --data_type structure \
    --config_file structure_config.json \
    --data_root_dir "${DATA_ROOT}" \
    --model_save_dir "../${OUT_DIR}" \
    --batch_size 8 \
    --num_workers 8 \
    --epochs 20 \
    2>&1 | tee "../${OUT_DIR}/train.log"

# Quick sanity check of the final checkpoint on the test split
python main.py \
    --mode eval \
    --data_type structure \
    --config_file structure_config.json \
    --data_root_dir "${DATA_ROOT}" \
    --model_load_path "../${OUT_DIR}/model.pth" \
    --table_words_dir "${DATA_ROOT}/../PubTables-1M-Table-Words-JSON"
