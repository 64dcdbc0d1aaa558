#!/usr/bin/env bash
# Train CellViT-SAM-H on the three PanNuke folds and run inference on the test fold.
# Usage: bash scripts/run_cellvit_pannuke.sh <gpu_id> [fold]
#
# Needs ~40 GB GPU memory for the SAM-H backbone with batch size 16 (A100-40G / A6000).
set -euo pipefail

GPU_ID=${1:-0}
FOLD=${2:-1}
CONFIG=configs/examples/cell_segmentation/train_cellvit_sam_h_fold${FOLD}.yaml
LOGDIR=logs/pannuke_fold${FOLD}

export CUDA_VISIBLE_DEVICES=${GPU_ID}
export OMP_NUM_THREADS=8
export PYTHONPATH=$(pwd):${PYTHONPATH:-}
export WANDB_MODE=${WANDB_MODE:-offline}
# avoid fragmentation with the large ViT-H activations
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512

source ~/miniconda3/etc/profile.d/conda.sh
conda activate cellvit_env

echo "=== $(date) CellViT fold ${FOLD} on GPU ${GPU_ID} ==="
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv

mkdir -p "${LOGDIR}"

# 1) training (the config sets gpu: 0 -> first *visible* GPU)
python3 cell_segmentation/run_cellvit.py --config "${CONFIG}" 2>&1 | tee "${LOGDIR}/train.log"

RUN_DIR=$(ls -td ${LOGDIR}/*/ | head -n 1)
echo "training finished, run dir: ${RUN_DIR}"

# 2) inference on the held-out fold with mixed precision
python3 cell_segmentation/inference/inference_cellvit_experiment_pannuke.py \
    --run_dir "${RUN_DIR}" \
    --checkpoint_name model_best.pth \
    --gpu 0 \
    --magnification 40 \
    --plots 2>&1 | tee "${LOGDIR}/inference.log"

# 3) WSI cell detection on an example slide
python3 cell_segmentation/inference/cell_detection.py \
    --model "${RUN_DIR}/checkpoints/model_best.pth" \
    --gpu 0 \
    --enforce_amp \
    --batch_size 8 \
    --geojson 2>&1 | tee "${LOGDIR}/detection.log"

nvidia-smi --query-gpu=memory.used --format=csv
echo "=== done $(date) ==="
