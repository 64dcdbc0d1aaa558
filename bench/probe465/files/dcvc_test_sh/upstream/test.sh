#!/usr/bin/env bash
# Reproduce the DCVC-RT numbers on UVG / MCL-JCV / HEVC (YUV420, 96 frames, intra period -1).
# One worker per GPU; adjust CUDA_VISIBLE_DEVICES / --cuda_idx to your machine.
set -e

export CUDA_VISIBLE_DEVICES=0,1,2,3
export SUPPRESS_CUSTOM_KERNEL_WARNING=1

CKPT_DIR=./checkpoints
OUT_DIR=./output

mkdir -p ${OUT_DIR}

python test_video.py \
    --model_path_i ${CKPT_DIR}/cvpr2025_image.pth.tar \
    --model_path_p ${CKPT_DIR}/cvpr2025_video.pth.tar \
    --rate_num 4 \
    --test_config ./dataset_config_example_yuv420.json \
    --cuda 1 \
    --cuda_idx 0 1 2 3 \
    -w 4 \
    --write_stream 1 \
    --force_zero_thres 0.12 \
    --output_path ${OUT_DIR}/output.json \
    --force_intra_period -1 \
    --reset_interval 64 \
    --force_frame_num -1 \
    --check_existing 0 \
    --verbose 0

nvidia-smi --query-gpu=name,memory.used --format=csv
