#!/usr/bin/env bash
# GenVIS: two-stage training on YouTube-VIS 2021 (R50 backbone).
#   stage 1: train the frame-level Mask2Former on COCO+YTVIS pseudo videos
#   stage 2: train GenVIS (semi-online) on top of the frozen detector
#
# usage: bash scripts/train_ytvis21_genvis.sh [NUM_GPUS] [OUTPUT_ROOT]
set -e

NUM_GPUS=${1:-8}
OUTPUT_ROOT=${2:-output/genvis_R50_ytvis21}
PORT=${PORT:-$((29500 + RANDOM % 1000))}

export DETECTRON2_DATASETS=${DETECTRON2_DATASETS:-/data/datasets}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4

echo "Using GPUs: ${CUDA_VISIBLE_DEVICES} (num-gpus=${NUM_GPUS}), dist port ${PORT}"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

# ---------------------------------------------------------------- stage 1
python train_net_genvis.py \
    --num-gpus ${NUM_GPUS} \
    --dist-url tcp://127.0.0.1:${PORT} \
    --config-file configs/genvis/ytvis21/vita_R50_bs8.yaml \
    OUTPUT_DIR ${OUTPUT_ROOT}/stage1 \
    SOLVER.AMP.ENABLED True

# ---------------------------------------------------------------- stage 2
python train_net_genvis.py \
    --num-gpus ${NUM_GPUS} \
    --dist-url tcp://127.0.0.1:${PORT} \
    --config-file configs/genvis/ytvis21/genvis_R50_bs8_semi_online.yaml \
    MODEL.WEIGHTS ${OUTPUT_ROOT}/stage1/model_final.pth \
    OUTPUT_DIR ${OUTPUT_ROOT}/stage2

# ---------------------------------------------------------------- eval (single GPU, long videos)
CUDA_VISIBLE_DEVICES=0 python train_net_genvis.py \
    --num-gpus 1 \
    --eval-only \
    --config-file configs/genvis/ytvis21/genvis_R50_bs8_semi_online.yaml \
    MODEL.WEIGHTS ${OUTPUT_ROOT}/stage2/model_final.pth \
    OUTPUT_DIR ${OUTPUT_ROOT}/stage2/eval
