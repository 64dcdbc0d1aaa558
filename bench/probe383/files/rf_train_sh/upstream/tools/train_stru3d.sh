#!/usr/bin/env bash
# Train RoomFormer on Structured3D (8 GPUs by default).

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
NUM_GPUS=8

python -m torch.distributed.launch \
        --nproc_per_node=${NUM_GPUS} \
        --master_port=29503 \
        --use_env main.py \
        --dataset_name=stru3d \
        --dataset_root=data/stru3d \
        --num_queries=800 \
        --num_polys=20 \
        --semantic_classes=-1 \
        --job_name=train_stru3d
