#!/usr/bin/env bash
# ---------------------------------------------------------------------------
# Multi-GPU training schedule for the memory-network VOS model (STCN / XMem style).
#
#   s0  : static-image pre-training (synthetic 3-frame sequences)
#   s3  : main training on DAVIS 2017 + YouTube-VOS 2019
#
# Usage:
#   bash scripts/train_s03.sh <exp_name> [num_gpus]
#
# Every stage is launched with torch.distributed; one process per GPU.
# Checkpoints go to ./saves/<date>_<exp_name>_s0 and ./saves/<date>_<exp_name>_s03
# ---------------------------------------------------------------------------
set -euo pipefail

EXP_NAME=${1:-retrain_s03}
NUM_GPUS=${2:-$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)}
MASTER_PORT=${MASTER_PORT:-9842}

# Static data + VOS data roots (see docs/TRAINING.md for the expected layout)
STATIC_ROOT=${STATIC_ROOT:-../static}
DAVIS_ROOT=${DAVIS_ROOT:-../DAVIS}
YV_ROOT=${YV_ROOT:-../YouTube}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1}
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN
# our 2x A6000 workstation has no NVLink bridge; P2P over PCIe hangs on some drivers
export NCCL_P2P_DISABLE=1

echo "== experiment      : ${EXP_NAME}"
echo "== GPUs visible    : ${CUDA_VISIBLE_DEVICES} (${NUM_GPUS} processes)"
echo "== master port     : ${MASTER_PORT}"
nvidia-smi

mkdir -p saves logs

# ---------------------------------------------------------------------------
# Stage 0: static images
# ---------------------------------------------------------------------------
python -m torch.distributed.launch \
    --master_port ${MASTER_PORT} \
    --nproc_per_node=${NUM_GPUS} \
    train.py \
    --id "${EXP_NAME}_s0" \
    --stage 0 \
    --static_root "${STATIC_ROOT}" \
    --batch_size 16 \
    --iterations 150000 \
    2>&1 | tee "logs/${EXP_NAME}_s0.log"

S0_MODEL=$(ls -t saves/*_${EXP_NAME}_s0/*_s0_150000.pth 2>/dev/null | head -n 1 || true)
if [ -z "${S0_MODEL}" ]; then
    echo "stage 0 checkpoint not found, aborting" >&2
    exit 1
fi
echo "== stage 0 model   : ${S0_MODEL}"

# ---------------------------------------------------------------------------
# Stage 3: main training, initialised from stage 0.
# Uses a different port so a hung stage-0 rendezvous does not block it.
# ---------------------------------------------------------------------------
CUDA_VISIBLE_DEVICES=0,1 python -m torch.distributed.launch \
    --master_port $((MASTER_PORT + 1)) \
    --nproc_per_node=2 \
    train.py \
    --id "${EXP_NAME}_s03" \
    --load_network "${S0_MODEL}" \
    --stage 3 \
    --davis_root "${DAVIS_ROOT}" \
    --yv_root "${YV_ROOT}" \
    --amp \
    2>&1 | tee "logs/${EXP_NAME}_s03.log"

# ---------------------------------------------------------------------------
# Quick sanity evaluation on DAVIS 2017 val with the final weights
# ---------------------------------------------------------------------------
FINAL_MODEL=$(ls -t saves/*_${EXP_NAME}_s03/*_s03_*.pth | head -n 1)
CUDA_VISIBLE_DEVICES=0 python eval.py \
    --model "${FINAL_MODEL}" \
    --dataset D17 --split val \
    --output "../output/${EXP_NAME}_d17"

echo "done. peak GPU memory per device:"
nvidia-smi --query-gpu=index,memory.used --format=csv
