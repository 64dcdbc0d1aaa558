#!/usr/bin/env bash
# Train the timbre watermarking model on LibriTTS.
# usage: bash run_train.sh [attack_type]
set -e

ATTACK=${1:-0}
export CUDA_VISIBLE_DEVICES=0,1
export PYTHONPATH=$(pwd):$PYTHONPATH

mkdir -p results/log
echo "[$(date)] start training, attack_type=${ATTACK}, GPUs: ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

sed -i "s/^attack_type: .*/attack_type: ${ATTACK}/" config/train.yaml

python train.py \
    -p config/process.yaml \
    -m config/model.yaml \
    -t config/train.yaml \
    2>&1 | tee results/log/train_attack${ATTACK}.log
