#!/usr/bin/env bash
# Multi-GPU training with torchrun.
#   bash scripts/train_dist.sh configs/ICM2O.yaml [extra args]
set -x

CONFIG=${1:-configs/ICM2O.yaml}
NGPUS=${NGPUS:-4}
PORT=${PORT:-29501}
OUTPUT=${OUTPUT:-output/$(basename ${CONFIG} .yaml)}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=8

mkdir -p ${OUTPUT}

torchrun --nproc_per_node=${NGPUS} --master_port=${PORT} \
    train.py --config ${CONFIG} --output_dir ${OUTPUT} --amp ${@:2} \
    2>&1 | tee ${OUTPUT}/train.log
