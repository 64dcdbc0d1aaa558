#!/bin/bash
# Two-stage GECToR training (stage 1: PIE synthetic, stage 2: Lang-8+NUCLE+FCE+W&I)
# Usage: bash scripts/train_bert.sh
set -euo pipefail

MODEL_ID=${MODEL_ID:-bert-base-cased}
OUT=${OUT:-outputs/bert-base-cased}
DATA=${DATA:-data/processed}
export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3}
NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false

echo "Training ${MODEL_ID} on ${NUM_GPUS} GPUs"

# stage 1
torchrun --standalone --nproc_per_node=${NUM_GPUS} train.py \
    --train_file ${DATA}/stage1.train \
    --valid_file ${DATA}/stage1.dev \
    --model_id ${MODEL_ID} \
    --save_dir ${OUT}/stage1 \
    --batch_size 64 \
    --accumulation 4 \
    --n_epochs 20 \
    --n_cold_epochs 2 \
    --lr 1e-5 \
    --num_warmup_steps 500 \
    --amp

# stage 2 (restores from stage 1 best)
torchrun --standalone --nproc_per_node=${NUM_GPUS} train.py \
    --train_file ${DATA}/stage2.train \
    --valid_file ${DATA}/stage2.dev \
    --model_id ${MODEL_ID} \
    --restore_dir ${OUT}/stage1/best \
    --save_dir ${OUT}/stage2 \
    --batch_size 64 \
    --accumulation 2 \
    --n_epochs 3 \
    --n_cold_epochs 0 \
    --lr 1e-5 \
    --amp

python predict.py \
    --input data/bea19/ABCN.dev.gold.bea19.src \
    --restore_dir ${OUT}/stage2/best \
    --out ${OUT}/stage2/dev.hyp
