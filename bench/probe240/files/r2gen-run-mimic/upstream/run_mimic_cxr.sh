#!/bin/bash
# Train R2Gen on MIMIC-CXR (one V100/A100 is enough; ~30 epochs, batch 16).
# Usage: bash run_mimic_cxr.sh [seed]

set -u

export CUDA_VISIBLE_DEVICES=1
SEED=${1:-456789}
SAVE_DIR=results/mimic_cxr_seed${SEED}

mkdir -p ${SAVE_DIR}
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv > ${SAVE_DIR}/gpu_info.csv

python main_train.py \
    --image_dir data/mimic_cxr/images/ \
    --ann_path data/mimic_cxr/annotation.json \
    --dataset_name mimic_cxr \
    --max_seq_length 100 \
    --threshold 10 \
    --batch_size 16 \
    --epochs 30 \
    --n_gpu 1 \
    --save_dir ${SAVE_DIR} \
    --step_size 1 \
    --gamma 0.8 \
    --seed ${SEED} 2>&1 | tee ${SAVE_DIR}/train.log

# evaluate the best checkpoint on the test split
python main_test.py \
    --image_dir data/mimic_cxr/images/ \
    --ann_path data/mimic_cxr/annotation.json \
    --dataset_name mimic_cxr \
    --max_seq_length 100 \
    --threshold 10 \
    --epochs 30 \
    --batch_size 16 \
    --n_gpu 1 \
    --beam_size 3 \
    --load ${SAVE_DIR}/model_best.pth \
    --seed ${SEED} 2>&1 | tee ${SAVE_DIR}/test.log
