#!/bin/bash
# Spikformer-8-512 on ImageNet-1K, 8 GPUs (A100 80G), T=4, 310 epochs.
# Spikformer-8-768 needs --dim 768 and ~2x memory; reduce -b to 24 on 40G cards.

DATA_DIR=/data/imagenet
OUT_DIR=./output/imagenet

CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch --nproc_per_node=8 --master_port 29501 \
    train.py -c imagenet.yml -data-dir ${DATA_DIR} --model spikformer --output ${OUT_DIR} \
    --layer 8 --dim 512 --num-heads 8 --time-steps 4 -b 32 --amp

# single-GPU smoke test on the validation split (a few hundred iterations)
# CUDA_VISIBLE_DEVICES=0 python train.py -c imagenet.yml -data-dir ${DATA_DIR} --epochs 1 -b 8 --log-interval 10

# evaluate a released checkpoint
# CUDA_VISIBLE_DEVICES=0 python test.py -c imagenet.yml --resume ./checkpoints/spikformer-8-512.pth.tar --no-resume-opt
