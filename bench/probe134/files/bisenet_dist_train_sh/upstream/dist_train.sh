#!/bin/bash
# Multi-GPU training launcher for BiSeNet.
# Uncomment the block for the model/dataset you want; ims_per_gpu in the config
# is the per-process batch, so the global batch is NGPUS * ims_per_gpu.

set -e

## bisenetv1 cityscapes
# export CUDA_VISIBLE_DEVICES=0,1
# cfg_file=configs/bisenetv1_city.py
# NGPUS=2
# python -m torch.distributed.launch --use_env --nproc_per_node=$NGPUS tools/train_amp.py --config $cfg_file

## bisenetv2 coco-stuff
# export CUDA_VISIBLE_DEVICES=0,1,2,3
# cfg_file=configs/bisenetv2_coco.py
# NGPUS=4
# torchrun --nproc_per_node=$NGPUS tools/train_amp.py --config $cfg_file

## bisenetv2 cityscapes (default)
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=4
cfg_file=configs/bisenetv2_city.py
NGPUS=8
PORT=${PORT:-29500}

torchrun --nproc_per_node=$NGPUS --master_port=$PORT tools/train_amp.py --config $cfg_file

## evaluate the final model on all the cards
torchrun --nproc_per_node=$NGPUS --master_port=$PORT tools/evaluate.py --config $cfg_file --weight-path res/model_final.pth
