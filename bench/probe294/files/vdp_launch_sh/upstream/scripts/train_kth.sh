#!/bin/bash
# KTH 64x64, 10 context frames -> 10 predicted frames, 4 GPUs on one node.
set -euo pipefail

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
# RTX 4090 boxes hang in the first all-reduce without this (no P2P over PCIe)
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=8
export TOKENIZERS_PARALLELISM=false

NUM_GPUS=$(echo "${CUDA_VISIBLE_DEVICES}" | tr ',' '\n' | wc -l)
OUT=./outputs/vdp_kth64_c10p10
mkdir -p "${OUT}"

nvidia-smi --query-gpu=index,name,memory.total --format=csv | tee "${OUT}/gpus.csv"

accelerate launch \
    --config_file configs/accelerate/4gpu.yaml \
    --num_processes "${NUM_GPUS}" \
    --main_process_port 29511 \
    train.py \
    --dataset kth \
    --data_root ./datasets/KTH \
    --output_dir "${OUT}" \
    --image_size 64 \
    --num_cond_frames 10 \
    --num_pred_frames 10 \
    --train_batch_size 16 \
    --learning_rate 1e-4 \
    --mixed_precision fp16 \
    --allow_tf32 \
    --save_and_sample_every 5000 \
    "$@" 2>&1 | tee -a "${OUT}/train.log"
