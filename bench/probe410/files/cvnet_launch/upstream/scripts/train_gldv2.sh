#!/usr/bin/env bash
# Train the ResNet-50 global model on GLDv2-clean with 4 GPUs.
#
#   bash scripts/train_gldv2.sh <output_dir>
#
# Adjust CUDA_VISIBLE_DEVICES / NUM_GPUS to the number of GPUs of your machine;
# TRAIN.BATCH_SIZE is the total mini-batch and must be a multiple of NUM_GPUS.

set -e

OUT_DIR=${1:-./output/R50_gldv2}
DATA_DIR=${DATA_DIR:-/data/gldv2}

export CUDA_VISIBLE_DEVICES=0,1,2,3
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN

python train.py \
    --cfg configs/resnet50_delg_gldv2.yaml \
    OUT_DIR ${OUT_DIR} \
    NUM_GPUS 4 \
    TRAIN.DATASET ${DATA_DIR} \
    TRAIN.BATCH_SIZE 128 \
    TRAIN.MIXED_PRECISION True \
    OPTIM.MAX_EPOCH 25 \
    DATA_LOADER.NUM_WORKERS 8

echo "Training finished, checkpoints are in ${OUT_DIR}/checkpoints"
