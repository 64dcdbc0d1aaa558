#!/usr/bin/env bash
# DiffIR-SR stage 2 (x4), one node with 8 GPUs
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

PYTHONPATH="./:${PYTHONPATH}" \
python -m torch.distributed.launch --nproc_per_node=8 --master_port=4397 DiffIR/train.py -opt options/train_DiffIRS2_x4.yml --launcher pytorch
