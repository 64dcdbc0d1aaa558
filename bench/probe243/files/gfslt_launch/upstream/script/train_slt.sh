#!/bin/bash
# Gloss-free SLT on Phoenix-2014T: stage 1 VLP pretraining, stage 2 GFSLT fine-tuning.
# 8 x A100 (40G); lower --batch-size to 2 on 24G cards.

PORT=${PORT:-1236}
NGPU=${NGPU:-8}

# ---- stage 1: visual-language pretraining ----
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch --nproc_per_node=${NGPU} --master_port=${PORT} --use_env \
    train_vlp.py --batch-size 4 --epochs 80 --opt sgd --lr 0.01 --output_dir out/vlp

# ---- stage 2: gloss-free SLT ----
CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch --nproc_per_node=${NGPU} --master_port=$((PORT+1)) --use_env \
    train_slt.py --batch-size 2 --epochs 200 --opt sgd --lr 0.01 --output_dir out/Gloss-Free \
    --finetune ./out/vlp/checkpoint.pth

# ---- evaluation on a single card ----
CUDA_VISIBLE_DEVICES=3 python -m torch.distributed.launch --nproc_per_node=1 --master_port=${PORT} --use_env \
    train_slt.py --batch-size 2 --epochs 200 --opt sgd --lr 0.01 --output_dir out/Gloss-Free \
    --resume out/Gloss-Free/best_checkpoint.pth --eval --device cuda
