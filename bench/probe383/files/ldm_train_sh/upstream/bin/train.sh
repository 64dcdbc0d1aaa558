#!/bin/bash
# Usage: bash bin/train.sh <DATASET> <JOB_DIR> [GPU_ID] [extra hydra overrides ...]
#   e.g. bash bin/train.sh rico25 tmp/jobs/rico25/layoutdm 0 model=layoutdm
set -eu

DATASET=$1
JOB_DIR=$2
GPU_ID=${3:-0}
shift 3 || true

echo "=== environment ==="
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv
poetry run python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"

export PYTHONPATH=src/trainer:${PYTHONPATH:-}

CUDA_VISIBLE_DEVICES=${GPU_ID} poetry run python3 -m src.trainer.trainer.main \
    dataset=${DATASET} \
    dataset.dir=./download/datasets \
    job_dir=${JOB_DIR} \
    fid_weight_dir=./download/fid_weights/FIDNetV3 \
    "$@"

CUDA_VISIBLE_DEVICES=${GPU_ID} poetry run python3 -m src.trainer.trainer.test \
    --job_dir ${JOB_DIR} \
    --result_dir ${JOB_DIR}/results \
    --cond unconditional
