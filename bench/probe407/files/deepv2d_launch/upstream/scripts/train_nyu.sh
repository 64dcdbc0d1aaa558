#!/bin/bash
# Train DeepV2D on NYUv2 with 4 GPUs (we used GPUs 4-7 of an 8x V100 node).
#
#   bash scripts/train_nyu.sh [name]

set -e

NAME=${1:-deepv2d_nyu}
NGPUS=4

export CUDA_VISIBLE_DEVICES=4,5,6,7
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=8

mkdir -p checkpoints logs

torchrun --standalone --nproc_per_node=$NGPUS train.py \
    --cfg cfgs/nyu.yaml \
    --name $NAME 2>&1 | tee logs/$NAME.log
