#!/usr/bin/env bash
# Multi-GPU training of MotionDiffuse on a single node.
# Usage:
#   bash tools/dist_train.sh 8 --name t2m_sample --batch_size 128 --times 200 --num_epochs 50 --dataset_name t2m
# Set PORT to run several jobs on the same machine.
set -x

GPUS=$1
PORT=${PORT:-29500}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_P2P_LEVEL=NVL
export OMP_NUM_THREADS=4

echo "Launching ${GPUS} processes on $(hostname)"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
python -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT \
    tools/train.py --distributed ${@:2}
