#!/usr/bin/env bash
# Train + evaluate TriDet on THUMOS14 (I3D features).
# usage: bash tools/run_thumos.sh [gpu_id] [exp_name]
set -e

GPU=${1:-0}
EXP=${2:-reproduce}

echo "training on GPU ${GPU}, exp ${EXP}"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader -i ${GPU}

CUDA_VISIBLE_DEVICES=${GPU} python train.py ./configs/thumos_i3d.yaml --output ${EXP}

CKPT_DIR=./ckpt/thumos_i3d_${EXP}
CUDA_VISIBLE_DEVICES=${GPU} python eval.py ./configs/thumos_i3d.yaml ${CKPT_DIR}
