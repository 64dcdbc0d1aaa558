#!/bin/bash
# Multi-GPU training of the spleen bundle with torchrun.
#   bash scripts/train_multigpu.sh [NUM_GPUS]
# The bundle's multi_gpu_train.json overrides device / sampler / DDP wrapping on top of train.json.
set -e

NUM_GPUS=${1:-8}
BUNDLE_ROOT=$(cd "$(dirname "$0")/.." && pwd)

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export OMP_NUM_THREADS=4
# NCCL tuning for the 8xA100 DGX nodes; comment out on PCIe boxes
export NCCL_DEBUG=WARN
export NCCL_P2P_LEVEL=NVL
export NCCL_IB_DISABLE=1

cd "${BUNDLE_ROOT}"

torchrun --standalone --nnodes=1 --nproc_per_node="${NUM_GPUS}" -m monai.bundle run \
    --meta_file configs/metadata.json \
    --config_file "['configs/train.json','configs/multi_gpu_train.json']" \
    --logging_file configs/logging.conf \
    --bundle_root "${BUNDLE_ROOT}"

# single-GPU evaluation of the best checkpoint afterwards
CUDA_VISIBLE_DEVICES=0 python -m monai.bundle run \
    --meta_file configs/metadata.json \
    --config_file "['configs/train.json','configs/evaluate.json']" \
    --logging_file configs/logging.conf
