#!/bin/bash

# MuseTalk Training Script
# This script combines both training stages for the MuseTalk model
# Usage: sh train.sh [stage1|stage2]
# Example: sh train.sh stage1  # To run stage 1 training
# Example: sh train.sh stage2  # To run stage 2 training

# Check if stage argument is provided
if [ $# -eq 0 ]; then
    echo "Error: Please specify the training stage"
    echo "Usage: ./train.sh [stage1|stage2]"
    exit 1
fi

STAGE=$1

# GPUs used for this run; edit to select a subset
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_P2P_DISABLE=1
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=8

NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)
echo "Found ${NUM_GPUS} GPUs"

# Validate stage argument
if [ "$STAGE" = "stage1" ]; then
    CONFIG_FILE="./configs/training/stage1.yaml"
elif [ "$STAGE" = "stage2" ]; then
    CONFIG_FILE="./configs/training/stage2.yaml"
else
    echo "Error: Invalid stage. Choose either 'stage1' or 'stage2'"
    exit 1
fi

# Start training
accelerate launch --config_file ./configs/training/gpu.yaml \
    --main_process_port 29502 \
    --num_processes ${NUM_GPUS} \
    train.py --config $CONFIG_FILE

echo "Training completed for $STAGE"
