#!/bin/bash
# Train DoveNet on iHarmony4 (all four sub-datasets).
# Usage: bash scripts/train_dovenet.sh [GPU_ID]
set -ex

DATASET_ROOT=./datasets/iHarmony4
NAME=experiment_dovenet
GPU_ID=${1:-0}

MODEL=dovenet
NITER=100
NITER_DECAY=20
BATCH=32
LR=0.0002
GAN_MODE=wgangp

mkdir -p ./checkpoints/${NAME}

CUDA_VISIBLE_DEVICES=${GPU_ID} python train.py \
  --dataset_root ${DATASET_ROOT} \
  --name ${NAME} \
  --model ${MODEL} \
  --dataset_mode iharmony4 \
  --dataset_name all \
  --is_train 1 \
  --gan_mode ${GAN_MODE} \
  --norm instance \
  --preprocess resize_and_crop \
  --lr ${LR} \
  --niter ${NITER} \
  --niter_decay ${NITER_DECAY} \
  --batch_size ${BATCH} \
  --save_epoch_freq 5 \
  --display_id 0 \
  --gpu_ids 0 \
  2>&1 | tee ./checkpoints/${NAME}/train.log
