#!/usr/bin/env bash
# Stage-2 LDM training on 8 A100 (80G). Batch 44 per GPU.
set -e

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_P2P_DISABLE=0
export OMP_NUM_THREADS=8

CONFIG=training/configs/ldm_training/v2a_cavp_ldm.yaml

python training/main.py \
    --base ${CONFIG} \
    -t \
    --gpus 0,1,2,3,4,5,6,7 \
    --precision 16 \
    --name diff_foley_ldm \
    --logdir logs/ldm
