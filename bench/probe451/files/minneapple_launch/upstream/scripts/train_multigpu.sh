#!/usr/bin/env bash
# Multi-GPU training of Mask R-CNN on MinneApple (detection split).
#
# Usage: bash scripts/train_multigpu.sh /data/minneapple/detection 4
#
# lr is scaled linearly from the reference value (0.02 for 8 GPUs x 2 imgs).
set -e

DATA=${1:-/data/minneapple/detection}
NGPU=${2:-4}
OUT=${OUT:-./output/mrcnn_$(date +%Y%m%d_%H%M)}
LR=$(python -c "print(0.02 / 8 * ${NGPU})")

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN

mkdir -p "${OUT}"
nvidia-smi --query-gpu=name,memory.total --format=csv | tee "${OUT}/gpus.csv"

python -m torch.distributed.launch --nproc_per_node=${NGPU} --use_env \
    train_rcnn.py \
    --data_path "${DATA}" \
    --model mrcnn \
    --epochs 50 \
    --lr ${LR} \
    --batch-size 2 \
    --output-dir "${OUT}" 2>&1 | tee "${OUT}/train.log"
