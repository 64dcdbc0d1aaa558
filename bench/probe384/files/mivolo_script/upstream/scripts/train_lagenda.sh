#!/usr/bin/env bash
# Train MiVOLO-D1 (face + person, 224px) on the Lagenda train split.
# Tested on 4 x A100 80GB; takes about 3 days. Use GPUS=... to pick other cards.
set -e

GPUS=${GPUS:-"4,5,6,7"}
NUM_GPUS=$(echo ${GPUS} | tr ',' '\n' | wc -l)
MASTER_PORT=${MASTER_PORT:-29512}
DATA_DIR=${DATA_DIR:-/data/lagenda}
OUTPUT=${OUTPUT:-./output/lagenda}

echo "Using GPUs: ${GPUS} (${NUM_GPUS} processes)"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

export OMP_NUM_THREADS=4
export CUDA_VISIBLE_DEVICES=${GPUS}

torchrun --nproc_per_node=${NUM_GPUS} --master_port=${MASTER_PORT} train.py ${DATA_DIR} \
    --dataset-name lagenda \
    --train-split train \
    --val-split validation \
    --with-persons \
    --model mivolo_d1_224 \
    --initial-checkpoint pretrained/volo_d1_face_age_gender_imdb.pth.tar \
    --batch-size 176 \
    --epochs 400 \
    --opt adamw --lr 1.0e-5 --warmup-lr 1.0e-6 --min-lr 1.0e-6 --weight-decay 0.05 \
    --sched cosine --warmup-epochs 5 \
    --workers 8 \
    --amp \
    --pin-mem \
    --sync-bn \
    --dist-bn reduce \
    --checkpoint-hist 5 \
    --output ${OUTPUT} \
    --log-wandb
