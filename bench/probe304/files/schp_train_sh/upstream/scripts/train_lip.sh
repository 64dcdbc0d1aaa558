#!/bin/bash
# Self-Correction Human Parsing: LIP training + evaluation
# 3 x V100 (16GB), batch 8 per GPU -> 24 images / iteration, ~3 days for 150 epochs.
set -e

DATA_DIR=${DATA_DIR:-./data/LIP}
LOG_DIR=${LOG_DIR:-./log/lip_schp}
GPU=${GPU:-0,1,2}
BATCH=8

mkdir -p ${LOG_DIR}

# The inplace_abn kernels are JIT-compiled by modules/functions.py on first import.
# Restrict the arch list so the build only targets the cards we actually have.
export TORCH_CUDA_ARCH_LIST="6.1;7.0;7.5"
export MAX_JOBS=8
export OMP_NUM_THREADS=4

nvidia-smi --query-gpu=index,name,memory.total --format=csv

CUDA_LAUNCH_BLOCKING=0 python train.py \
    --data-dir ${DATA_DIR} \
    --gpu ${GPU} \
    --batch-size ${BATCH} \
    --learning-rate 7e-3 \
    --epochs 150 \
    --schp-start 100 \
    --cycle-epochs 10 \
    --imagenet-pretrain ./pretrain_model/resnet101-imagenet.pth \
    --log-dir ${LOG_DIR} 2>&1 | tee ${LOG_DIR}/train.log

# multi-scale + flip evaluation of the last self-correction checkpoint (single GPU)
python evaluate.py \
    --data-dir ${DATA_DIR} \
    --gpu 0 \
    --model-restore ${LOG_DIR}/schp_5_checkpoint.pth.tar \
    --multi-scales 0.5,0.75,1.0,1.25,1.5 \
    --flip \
    --log-dir ${LOG_DIR} 2>&1 | tee ${LOG_DIR}/eval.log
