#!/usr/bin/env bash
# Multi-GPU training for DeepfakeBench detectors (torch.distributed.launch + DDP).
#
#   bash scripts/train_ddp.sh <detector> [num_gpus] [port]
#   e.g. bash scripts/train_ddp.sh xception 4 29501
#
# Single-GPU runs do not need this script:
#   python training/train.py --detector_path ./training/config/detector/xception.yaml
set -euo pipefail

DETECTOR=${1:-xception}
NUM_GPUS=${2:-4}
PORT=${3:-29501}

TRAIN_SET=${TRAIN_SET:-"FaceForensics++"}
TEST_SET=${TEST_SET:-"Celeb-DF-v2 DFDCP DFDC"}

if ! command -v nvidia-smi &> /dev/null; then
    echo "[train_ddp] nvidia-smi not found - is this a GPU node?" >&2
    exit 1
fi

# pin the job to the first NUM_GPUS cards unless the caller already chose
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((NUM_GPUS - 1)))}
export OMP_NUM_THREADS=4
# RTX 3090 / A6000 boxes without NVLink hang in the first all-reduce without this
export NCCL_P2P_DISABLE=1
export NCCL_DEBUG=WARN

LOG_DIR=./logs/ddp_${DETECTOR}_$(date +%Y%m%d_%H%M%S)
mkdir -p "${LOG_DIR}"

echo "[train_ddp] detector=${DETECTOR} gpus=${NUM_GPUS} (${CUDA_VISIBLE_DEVICES}) port=${PORT}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv | tee "${LOG_DIR}/gpus.csv"

python -m torch.distributed.launch \
    --nproc_per_node="${NUM_GPUS}" \
    --master_port="${PORT}" \
    training/train.py \
    --detector_path "./training/config/detector/${DETECTOR}.yaml" \
    --train_dataset ${TRAIN_SET} \
    --test_dataset ${TEST_SET} \
    --ddp 2>&1 | tee "${LOG_DIR}/train.log"

echo "[train_ddp] done, logs in ${LOG_DIR}"
