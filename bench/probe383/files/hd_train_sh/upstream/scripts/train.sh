#!/usr/bin/env bash
# Train / sample HouseDiffusion on RPLAN.
# Usage: bash scripts/train.sh <target_set> [gpu]
#   target_set : number of rooms held out for evaluation (5, 6, 7 or 8)
#   gpu        : GPU index to use (default 0)
set -e

TARGET_SET=${1:-8}
GPU=${2:-0}

export OPENAI_LOGDIR=ckpts/exp_${TARGET_SET}
mkdir -p ${OPENAI_LOGDIR}

cd scripts

CUDA_VISIBLE_DEVICES=${GPU} python image_train.py \
    --dataset rplan \
    --batch_size 32 \
    --set_name train \
    --target_set ${TARGET_SET}

# sampling with the last EMA checkpoint
CUDA_VISIBLE_DEVICES=${GPU} python image_sample.py \
    --dataset rplan \
    --batch_size 32 \
    --set_name eval \
    --target_set ${TARGET_SET} \
    --model_path ../${OPENAI_LOGDIR}/model250000.pt \
    --num_samples 64
