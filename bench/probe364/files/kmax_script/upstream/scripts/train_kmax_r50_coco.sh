#!/bin/bash
# Train kMaX-DeepLab (ResNet-50) on COCO panoptic with all GPUs of this machine.
# Effective batch size is 64; with fewer than 8 GPUs scale SOLVER.IMS_PER_BATCH and BASE_LR together.

set -e

export DETECTRON2_DATASETS=${DETECTRON2_DATASETS:-/data/datasets}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export OMP_NUM_THREADS=4

NUM_GPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "Found ${NUM_GPUS} GPUs"

CONFIG=configs/coco/panoptic_segmentation/kmax_r50.yaml
OUTPUT_DIR=${OUTPUT_DIR:-./output/kmax_r50_coco}

python3 train_net.py \
    --config-file ${CONFIG} \
    --num-gpus ${NUM_GPUS} \
    OUTPUT_DIR ${OUTPUT_DIR} \
    "$@"
