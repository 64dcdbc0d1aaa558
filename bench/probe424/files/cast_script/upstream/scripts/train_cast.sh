#!/usr/bin/env bash
# Train CAST on a photo->painting dataset (trainA = photos, trainB = artworks).
# Usage: bash scripts/train_cast.sh <dataroot> [gpu_id]
set -e

DATAROOT=${1:-./datasets/photo2art}
GPU=${2:-0}
NAME=CAST_model

export CUDA_VISIBLE_DEVICES=${GPU}

nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv

python train.py \
    --dataroot "${DATAROOT}" \
    --name ${NAME} \
    --model cast \
    --dataset_mode unaligned \
    --batch_size 1 \
    --load_size 512 \
    --crop_size 256 \
    --n_epochs 50 \
    --n_epochs_decay 50 \
    --display_id 0 \
    --gpu_ids 0

python test.py \
    --dataroot "${DATAROOT}" \
    --name ${NAME} \
    --model cast \
    --phase test \
    --epoch latest \
    --num_test 1000 \
    --gpu_ids 0
