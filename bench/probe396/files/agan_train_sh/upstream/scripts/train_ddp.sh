#!/bin/bash
# Multi-GPU training of AnimeGAN v2 generator on the Hayao style set.
# Usage: bash scripts/train_ddp.sh [num_gpus]
set -e

NUM_GPUS=${1:-2}
export CUDA_VISIBLE_DEVICES=0,1
export OMP_NUM_THREADS=4

torchrun --standalone --nproc_per_node=${NUM_GPUS} train.py \
    --anime_image_dir dataset/Hayao \
    --real_image_dir dataset/photo_train \
    --model v2 \
    --batch_size 8 \
    --amp \
    --init_epochs 10 \
    --exp_dir runs \
    --save_interval 1 \
    --gan_loss lsgan \
    --init_lr 1e-4 \
    --lr_g 2e-5 \
    --lr_d 4e-5 \
    --wadvd 300.0 \
    --wadvg 300.0 \
    --wcon 1.5 \
    --wgra 3.0 \
    --wcol 30.0 \
    --use_sn \
    --device cuda \
    --ddp
