#!/usr/bin/env bash
# DynamicViT-DeiT/S (rho = 0.7) on 8 GPUs, 30 epochs, batch 96 per GPU.
set -e

DATA=${DATA:-/path/to/imagenet}
OUT=${OUT:-logs/dynamicvit_deit-s}
NGPUS=${NGPUS:-8}

mkdir -p $OUT
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

python -m torch.distributed.launch --nproc_per_node=$NGPUS --use_env main.py \
    --output_dir $OUT \
    --model deit-s \
    --input_size 224 \
    --batch_size 96 \
    --data_path $DATA \
    --epochs 30 \
    --base_rate 0.7 \
    --lr 1e-3 \
    --warmup_epochs 5 \
    --use_amp true \
    2>&1 | tee $OUT/train.log
