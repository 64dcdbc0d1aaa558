#!/bin/bash
# Train RVT on Gen1 with 2 GPUs (DDP). Effective batch size = 2 x BATCH_SIZE_PER_GPU.
#   bash scripts/train_gen1.sh base /data/gen1
#   MDL_CFG in {tiny, small, base}
set -euo pipefail

MDL_CFG=${1:-base}
DATA_DIR=${2:-/data/gen1}
GPU_IDS=[0,1]
BATCH_SIZE_PER_GPU=8
TRAIN_WORKERS_PER_GPU=6
EVAL_WORKERS_PER_GPU=2

export CUDA_LAUNCH_BLOCKING=0
# consumer cards without NVLink hang in the first all-reduce without this
export NCCL_P2P_DISABLE=1
export NCCL_DEBUG=WARN

python train.py model=rnndet dataset=gen1 dataset.path=${DATA_DIR} \
    wandb.project_name=RVT wandb.group_name=gen1 \
    +experiment/gen1="${MDL_CFG}.yaml" \
    hardware.gpus=${GPU_IDS} \
    batch_size.train=${BATCH_SIZE_PER_GPU} batch_size.eval=${BATCH_SIZE_PER_GPU} \
    hardware.num_workers.train=${TRAIN_WORKERS_PER_GPU} \
    hardware.num_workers.eval=${EVAL_WORKERS_PER_GPU}
