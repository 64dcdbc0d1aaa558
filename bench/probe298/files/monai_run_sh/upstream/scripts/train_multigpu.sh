#!/bin/bash
#
# Multi-GPU training of the CXR14 DenseNet121 bundle with torchrun.
#
#   bash scripts/train_multigpu.sh            # all 8 GPUs of the node
#   NUM_GPUS=4 GPUS=0,1,2,3 bash scripts/train_multigpu.sh
#
set -e

BUNDLE_ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "${BUNDLE_ROOT}"

NUM_GPUS=${NUM_GPUS:-8}
GPUS=${GPUS:-0,1,2,3,4,5,6,7}
MASTER_PORT=${MASTER_PORT:-29501}

export CUDA_VISIBLE_DEVICES=${GPUS}
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN
export PYTHONPATH=${BUNDLE_ROOT}:${PYTHONPATH}

echo "Training on GPUs ${CUDA_VISIBLE_DEVICES} (${NUM_GPUS} processes)"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

torchrun --standalone --nnodes=1 --nproc_per_node=${NUM_GPUS} --master_port=${MASTER_PORT} \
    -m monai.bundle run \
    --meta_file configs/metadata.json \
    --config_file "['configs/train.json','configs/multi_gpu_train.json']" \
    --logging_file configs/logging.conf \
    --bundle_root "${BUNDLE_ROOT}"

# single-GPU evaluation of the best checkpoint
CUDA_VISIBLE_DEVICES=0 python -m monai.bundle run \
    --config_file "['configs/train.json','configs/evaluate.json']" \
    --bundle_root "${BUNDLE_ROOT}"
