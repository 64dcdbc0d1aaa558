#!/bin/bash
# Multi-GPU (DDP) training for DeepfakeBench detectors.
#
#   bash scripts/train_ddp.sh <detector> [num_gpus]
#   GPUS=4,5,6,7 bash scripts/train_ddp.sh effort 4
#
# Each process trains on one GPU; evaluation runs on rank 0 only.

set -e

DETECTOR=${1:-xception}
NUM_GPUS=${2:-4}
GPUS=${GPUS:-0,1,2,3}
PORT=$((29500 + RANDOM % 1000))

export CUDA_VISIBLE_DEVICES=${GPUS}
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=8

CONFIG=./training/config/detector/${DETECTOR}.yaml
if [ ! -f "${CONFIG}" ]; then
    echo "no detector config at ${CONFIG}" >&2
    exit 1
fi

echo "[$(date '+%F %T')] training ${DETECTOR} on GPUs ${GPUS} (${NUM_GPUS} procs)"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

python -m torch.distributed.launch --nproc_per_node=${NUM_GPUS} --master_port ${PORT} \
    training/train.py \
    --detector_path ${CONFIG} \
    --train_dataset "FaceForensics++" \
    --test_dataset "Celeb-DF-v1" "Celeb-DF-v2" "DFDCP" \
    --ddp \
    --task_target "ddp_${NUM_GPUS}gpu"

# single-GPU cross-dataset evaluation of the best checkpoint
BEST=$(ls -td ./logs/training/${DETECTOR}_* | head -n 1)/test/avg/ckpt_best.pth
CUDA_VISIBLE_DEVICES=${GPUS%%,*} python training/test.py \
    --detector_path ${CONFIG} \
    --test_dataset "Celeb-DF-v2" "DFDC" "UADFV" \
    --weights_path "${BEST}"
