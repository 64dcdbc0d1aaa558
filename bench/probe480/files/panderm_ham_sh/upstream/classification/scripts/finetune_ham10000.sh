#!/bin/bash
# Fine-tune PanDerm-Large on HAM10000 (7 classes) with 4 GPUs, then evaluate
# the best checkpoint on the official test split with 8-view TTA.
#
#   bash scripts/finetune_ham10000.sh /path/to/panderm_ll_data6_checkpoint-499.pth
set -e

PRETRAINED=${1:-"../pretrain_weight/panderm_ll_data6_checkpoint-499.pth"}
DATA_ROOT=/data/skin/HAM10000
OUTPUT_DIR=./results/ham10000_panderm_large_ft
MASTER_PORT=${MASTER_PORT:-29501}

mkdir -p ${OUTPUT_DIR}

export OMP_NUM_THREADS=8
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1

CUDA_VISIBLE_DEVICES=0,1,2,3 torchrun --nproc_per_node=4 --master_port=${MASTER_PORT} run_class_finetuning.py \
    --model PanDerm_Large_FT \
    --finetune ${PRETRAINED} \
    --nb_classes 7 \
    --data_set HAM10000 \
    --csv_path ${DATA_ROOT}/HAM10000_clean.csv \
    --root_path ${DATA_ROOT}/images/ \
    --batch_size 128 \
    --lr 5e-4 \
    --update_freq 1 \
    --warmup_epochs 10 \
    --epochs 50 \
    --layer_decay 0.65 \
    --drop_path 0.2 \
    --weight_decay 0.05 \
    --mixup 0.8 \
    --cutmix 1.0 \
    --monitor recall \
    --output_dir ${OUTPUT_DIR} \
    --log_dir ${OUTPUT_DIR}/tb \
    --dist_eval \
    --seed 0 2>&1 | tee ${OUTPUT_DIR}/train.log

# single-GPU evaluation of the best checkpoint with TTA
CUDA_VISIBLE_DEVICES=0 python3 run_class_finetuning.py \
    --model PanDerm_Large_FT \
    --nb_classes 7 \
    --data_set HAM10000 \
    --csv_path ${DATA_ROOT}/HAM10000_clean.csv \
    --root_path ${DATA_ROOT}/images/ \
    --batch_size 128 \
    --resume ${OUTPUT_DIR}/checkpoint-best.pth \
    --output_dir ${OUTPUT_DIR} \
    --eval \
    --TTA 2>&1 | tee ${OUTPUT_DIR}/test.log
