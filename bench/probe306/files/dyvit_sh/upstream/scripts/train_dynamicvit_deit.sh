#!/usr/bin/env bash
# DynamicViT on DeiT-S / DeiT-B, 8x V100 32GB (one node).
#
#   bash scripts/train_dynamicvit_deit.sh deit_small 0.7
#   bash scripts/train_dynamicvit_deit.sh deit_base 0.7 eval
#
# Pretrained DeiT weights are expected in the repo root (deit_small_patch16_224-cd65a155.pth).
set -euo pipefail

ARCH=${1:-deit_small}
BASE_RATE=${2:-0.7}
MODE=${3:-train}

DATA_PATH=${DATA_PATH:-/datasets/imagenet}
OUTPUT_DIR=${OUTPUT_DIR:-logs/dynamicvit_${ARCH}_${BASE_RATE}}
NGPUS=${NGPUS:-8}
MASTER_PORT=${MASTER_PORT:-29500}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN

if [ "${ARCH}" = "deit_small" ]; then
    BATCH=96
    LR=1e-3
else
    BATCH=64
    LR=5e-4
fi

mkdir -p "${OUTPUT_DIR}"
nvidia-smi --query-gpu=name,memory.total --format=csv | tee "${OUTPUT_DIR}/gpus.csv"

if [ "${MODE}" = "eval" ]; then
    python3 main.py --arch "${ARCH}" --base_rate "${BASE_RATE}" \
        --data-path "${DATA_PATH}" --batch-size 256 \
        --resume "${OUTPUT_DIR}/checkpoint.pth" --eval --device cuda
    exit 0
fi

python3 -m torch.distributed.launch --nproc_per_node="${NGPUS}" --master_port="${MASTER_PORT}" --use_env \
    main.py \
    --output_dir "${OUTPUT_DIR}" \
    --arch "${ARCH}" \
    --input-size 224 \
    --batch-size "${BATCH}" \
    --data-path "${DATA_PATH}" \
    --epochs 30 \
    --base_rate "${BASE_RATE}" \
    --lr "${LR}" \
    --warmup-epochs 5 \
    --dist-eval \
    --distill \
    --pin-mem \
    2>&1 | tee -a "${OUTPUT_DIR}/train.log"
