#!/bin/bash

####################################
#           Pre-training           #
####################################

usage() {
    echo "Usage: bash run_pretrain.sh --gpus 0,1,2,3 --config_path ./configs/pretrain/st_mem.yaml --output_dir ./st_mem_output --exp_name pretrain"
}

while [[ "$#" -gt 0 ]]; do
    case $1 in
        --gpus) GPU_IDS="$2"; shift ;;
        --config_path) CONFIG_PATH="$2"; shift ;;
        --output_dir) OUTPUT_DIR="$2"; shift ;;
        --exp_name) EXP_NAME="$2"; shift ;;
        -h|--help) usage; exit 0 ;;
        *) echo "Unknown parameter passed: $1"; usage; exit 1 ;;
    esac
    shift
done

GPU_IDS=${GPU_IDS:-0}
CONFIG_PATH=${CONFIG_PATH:-./configs/pretrain/st_mem.yaml}
OUTPUT_DIR=${OUTPUT_DIR:-./st_mem_output}
EXP_NAME=${EXP_NAME:-pretrain}

IFS=',' read -ra GPU_ARR <<< "$GPU_IDS"
NUM_GPUS=${#GPU_ARR[@]}

echo "Use GPUs: $GPU_IDS ($NUM_GPUS)"

CUDA_VISIBLE_DEVICES=$GPU_IDS \
torchrun --standalone \
         --nnodes=1 \
         --nproc_per_node=$NUM_GPUS \
         main_pretrain.py \
         --config_path $CONFIG_PATH \
         --output_dir $OUTPUT_DIR \
         --exp_name $EXP_NAME
