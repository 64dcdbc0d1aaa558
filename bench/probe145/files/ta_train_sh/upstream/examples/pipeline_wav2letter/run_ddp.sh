#!/usr/bin/env bash
# Train Wav2Letter on LibriSpeech with DistributedDataParallel on one 8-GPU node.
#
#   bash run_ddp.sh /datasets/librispeech ./exp/wav2letter
#
set -euo pipefail

DATASET_ROOT=${1:-/datasets/librispeech}
EXP_DIR=${2:-./exp/wav2letter}
NUM_GPUS=${NUM_GPUS:-8}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=4
export PYTHONUNBUFFERED=1

mkdir -p "${EXP_DIR}"

echo "== GPUs =="
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv

python -c "import torch; assert torch.cuda.device_count() >= ${NUM_GPUS}, 'not enough GPUs'"

python main.py \
    --dataset-root "${DATASET_ROOT}" \
    --dataset-train train-clean-100 train-clean-360 train-other-500 \
    --dataset-valid dev-clean \
    --type mfcc \
    --batch-size 128 \
    --learning-rate 0.6 \
    --gamma 0.99 \
    --n-bins 13 \
    --momentum 0.8 \
    --clip-grad 0.0 \
    --optimizer adadelta \
    --scheduler reduceonplateau \
    --workers 8 \
    --checkpoint "${EXP_DIR}/checkpoint.pth.tar" \
    --distributed \
    --world-size "${NUM_GPUS}" \
    2>&1 | tee "${EXP_DIR}/train.log"
