#!/usr/bin/env bash
# Train VSLNet on Ego4D NLQ with SlowFast (+ optional Omnivore) clip features.
# Usage: bash scripts/train_nlq_slowfast.sh <gpu_id> <run_name>
set -e

GPU_ID=${1:-0}
NAME=${2:-official_v1}
TASK_NAME=nlq_official_v1
BASE_DIR=data/dataset/nlq_official_v1
FEATURE_BASE_DIR=data/features/nlq_official_v1/
FEATURE_DIR=${FEATURE_BASE_DIR}/official
MODEL_BASE_DIR=/tmp/ego4d_nlq_models/

echo "== host info =="
hostname
nvidia-smi
python -c "import torch; print(torch.__version__, torch.cuda.is_available())"

export CUDA_VISIBLE_DEVICES=${GPU_ID}
export TOKENIZERS_PARALLELISM=false

cd "$(dirname "$0")/.."

python prepare_ego4d_dataset.py \
    --input_train_split data/nlq_train.json \
    --input_val_split data/nlq_val.json \
    --input_test_split data/nlq_test_unannotated.json \
    --video_feature_read_path ${FEATURE_DIR} \
    --clip_feature_save_path ${FEATURE_BASE_DIR}/official \
    --output_save_path ${BASE_DIR}

python main.py \
    --task ${TASK_NAME} \
    --predictor bert \
    --dim 128 \
    --mode train \
    --video_feature_dim 2304 \
    --max_pos_len 128 \
    --epochs 200 \
    --fv official \
    --num_workers 32 \
    --model_dir ${MODEL_BASE_DIR}/${NAME} \
    --eval_gt_json "${BASE_DIR}/../nlq_val.json" \
    --log_to_tensorboard ${NAME} \
    --tb_log_freq 5 \
    --remove_empty_queries_from train

python main.py \
    --task ${TASK_NAME} \
    --predictor bert \
    --mode test \
    --video_feature_dim 2304 \
    --max_pos_len 128 \
    --fv official \
    --model_dir ${MODEL_BASE_DIR}/${NAME}
