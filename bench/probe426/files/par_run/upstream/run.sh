#!/usr/bin/env bash
# Train the strong baseline on PA100k with 2 GPUs (batch size 64 per GPU).
# Single-GPU training: python train.py --cfg ./configs/pedes_baseline/pa100k.yaml

CFG=${1:-./configs/pedes_baseline/pa100k.yaml}

CUDA_VISIBLE_DEVICES=0,1 python -m torch.distributed.launch --nproc_per_node=2 --master_port=29501 \
    train.py --cfg ${CFG} --dist_bn reduce

# evaluation of the best checkpoint on the test split
CUDA_VISIBLE_DEVICES=0 python infer.py --cfg ${CFG}
