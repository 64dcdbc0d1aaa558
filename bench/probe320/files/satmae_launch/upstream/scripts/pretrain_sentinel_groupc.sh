#!/bin/bash
# SatMAE group-channel pre-training on fMoW-Sentinel (13 bands, 3 dropped).
# 8 x A100-80GB, ~5 days for 50 epochs at input 96 / patch 8.
#
# Usage: bash scripts/pretrain_sentinel_groupc.sh [NUM_GPUS]

NUM_GPUS=${1:-8}
MASTER_PORT=${MASTER_PORT:-29201}

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=4

IN_PATH=/home/fmow-sentinel/train.csv
OUT_DIR=./experiments/pretrain/sentinel_groupc_vitl_e50
mkdir -p ${OUT_DIR}

python -m torch.distributed.launch --nproc_per_node=${NUM_GPUS} --master_port=${MASTER_PORT} main_pretrain.py \
    --output_dir ${OUT_DIR} \
    --log_dir ${OUT_DIR} \
    --wandb satmae_sentinel_pretrain \
    --batch_size 8 --accum_iter 16 \
    --model_type group_c \
    --dataset_type sentinel --dropped_bands 0 9 10 \
    --grouped_bands 0 1 2 6 --grouped_bands 3 4 5 7 --grouped_bands 8 9 \
    --model mae_vit_large_patch16 \
    --input_size 96 --patch_size 8 \
    --mask_ratio 0.75 \
    --epochs 50 \
    --warmup_epochs 5 \
    --blr 0.0001 --num_workers 16 \
    --train_path ${IN_PATH} \
    --device cuda \
    2>&1 | tee ${OUT_DIR}/train.log
