#!/usr/bin/env bash
# Usage:
#   bash train.sh xception 4        # DDP on 4 GPUs
#   bash train.sh xception 1 2      # single GPU, use GPU 2
set -u

DETECTOR=${1:-xception}
GPUS=${2:-1}
GPU_ID=${3:-0}
PORT=${PORT:-29501}

CFG=./training/config/detector/${DETECTOR}.yaml
TRAIN_SET="FaceForensics++"
TEST_SET="Celeb-DF-v1 Celeb-DF-v2 DFDCP"

echo "==> detector: ${DETECTOR}  gpus: ${GPUS}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

if [ "${GPUS}" -gt 1 ]; then
    export CUDA_VISIBLE_DEVICES=0,1,2,3
    python -m torch.distributed.launch --nproc_per_node=${GPUS} --master_port=${PORT} \
        training/train.py \
        --detector_path ${CFG} \
        --train_dataset ${TRAIN_SET} \
        --test_dataset ${TEST_SET} \
        --ddp
else
    CUDA_VISIBLE_DEVICES=${GPU_ID} python training/train.py \
        --detector_path ${CFG} \
        --train_dataset ${TRAIN_SET} \
        --test_dataset ${TEST_SET}
fi
