#!/usr/bin/env bash
# Reproduce the MRMS (USA) case study figures of NowcastNet.
# Usage: bash mrms_case_test.sh [GPU_ID]

GPU_ID=${1:-0}

export CUDA_VISIBLE_DEVICES=${GPU_ID}

python run.py \
    --gpu ${GPU_ID} \
    --device cuda:0 \
    --worker 1 \
    --cpu_worker 1 \
    --dataset_name radar \
    --dataset_path data/dataset/mrms/figure \
    --model_name NowcastNet \
    --pretrained_model data/checkpoints/mrms_model.ckpt \
    --gen_frm_dir results/us/ \
    --case_type normal \
    --input_length 9 \
    --total_length 29 \
    --img_height 512 \
    --img_width 512 \
    --batch_size 1 \
    --num_save_samples 1000
