#!/usr/bin/env bash

set -x

EXP_DIR=r50_seqformer_ytvis
PY_ARGS=${@:1}

# YouTube-VIS 2019 only (no COCO joint training); 8 x V100-32G, batch 1 clip / GPU
CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7} \
python3 -u -m torch.distributed.launch --nproc_per_node=8 --use_env main.py \
    --dataset_file YoutubeVIS \
    --epochs 12 \
    --lr 2e-4 \
    --lr_drop_epochs 4 10 \
    --batch_size 1 \
    --num_workers 2 \
    --coco_path ../coco \
    --ytvis_path ../ytvis \
    --num_queries 300 \
    --num_frames 5 \
    --with_box_refine \
    --masks \
    --rel_coord \
    --backbone resnet50 \
    --pretrain_weights weights/r50_weight.pth \
    --output_dir ${EXP_DIR} \
    ${PY_ARGS}
