#!/usr/bin/env bash
# Train MonoFlex on KITTI (train split) and evaluate on val.
# Usage: bash scripts/train.sh [exp_name]
set -e

EXP=${1:-monoflex_default}
OUT=output/${EXP}

mkdir -p ${OUT}

# two GPUs, 8 images per card
CUDA_VISIBLE_DEVICES=0,1 python tools/plain_train_net.py \
    --num_gpus 2 \
    --batch_size 16 \
    --config runs/monoflex.yaml \
    --output ${OUT} 2>&1 | tee ${OUT}/train.log

# evaluate the last checkpoint on a single card
CUDA_VISIBLE_DEVICES=0 python tools/plain_train_net.py \
    --config runs/monoflex.yaml \
    --ckpt ${OUT}/model_moderate_best_soft.pth \
    --eval --output ${OUT}
