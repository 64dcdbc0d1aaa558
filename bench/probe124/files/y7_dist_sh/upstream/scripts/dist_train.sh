#!/usr/bin/env bash
# Multi-GPU DDP launcher for YOLOv7 training with auxiliary heads (P6 models: W6 / E6 / D6 / E6E)
#
# Usage:
#   bash scripts/dist_train.sh [NGPUS] [CFG] [DATA] [HYP]
#   e.g. bash scripts/dist_train.sh 8 cfg/training/yolov7-w6.yaml data/coco.yaml data/hyp.scratch.p6.yaml
#
# Tested on 8x A100 80GB, CUDA 11.7, torch 1.13.1
set -e

NGPUS=${1:-8}
CFG=${2:-cfg/training/yolov7-w6.yaml}
DATA=${3:-data/coco.yaml}
HYP=${4:-data/hyp.scratch.p6.yaml}
NAME=${NAME:-$(basename ${CFG} .yaml)}
PORT=${PORT:-9527}
BATCH=${BATCH:-128}
IMG=${IMG:-1280}
WORKERS=${WORKERS:-8}

ROOT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "${ROOT_DIR}"

# GPU selection and NCCL tuning
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
export PYTHONUNBUFFERED=1

echo "==> Launching ${NGPUS}-GPU DDP training: cfg=${CFG} data=${DATA} hyp=${HYP}"
nvidia-smi --query-gpu=index,name,memory.total,memory.used --format=csv

# --device takes indices relative to the visible devices
DEVICES=$(seq -s, 0 $((NGPUS - 1)))

LOG_DIR=runs/logs
mkdir -p ${LOG_DIR}
LOG_FILE=${LOG_DIR}/${NAME}_$(date +%Y%m%d_%H%M%S).log

python -m torch.distributed.launch --nproc_per_node ${NGPUS} --master_port ${PORT} train_aux.py \
    --workers ${WORKERS} \
    --device ${DEVICES} \
    --sync-bn \
    --batch-size ${BATCH} \
    --data ${DATA} \
    --img ${IMG} ${IMG} \
    --cfg ${CFG} \
    --weights '' \
    --name ${NAME} \
    --hyp ${HYP} 2>&1 | tee ${LOG_FILE}

echo "==> Done. Log written to ${LOG_FILE}"
