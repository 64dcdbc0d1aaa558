#!/bin/bash
# FreeSeed, 18 views, AAPM-Mayo (2 x RTX 3090, ~11h)
# usage: bash scripts/train_freeseed.sh [num_views]

export CUDA_VISIBLE_DEVICES=0,1
export OMP_NUM_THREADS=8
NUM_GPUS=2
NUM_VIEWS=${1:-18}
PORT=$((29500 + RANDOM % 1000))

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

python -m torch.distributed.launch --nproc_per_node=${NUM_GPUS} --master_port=${PORT} \
    main.py \
    --dist \
    --trainer_mode train \
    --network freeseed \
    --dataset_name aapm \
    --dataset_path /data/aapm_ldct/processed \
    --num_views ${NUM_VIEWS} \
    --num_full_views 720 \
    --img_size 256 \
    --epochs 30 \
    --batch_size 2 \
    --lr 1e-4 \
    --net_dims 64 \
    --ratio_ginout 0.5 \
    --mask_type bp-gaussian-mc \
    --use_sgm \
    --amp \
    --use_wandb \
    --wandb_project freeseed
