#!/bin/bash
# HQ-SAM decoder training, 8 x A100 (80G). Adjust --nproc_per_node to the GPUs you have.
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_P2P_DISABLE=1
export OMP_NUM_THREADS=8

MODEL_TYPE=${MODEL_TYPE:-vit_l}
CKPT=./pretrained_checkpoint/sam_${MODEL_TYPE}_0b3195.pth

python -m torch.distributed.launch --nproc_per_node=8 --use_env train.py \
    --checkpoint ${CKPT} \
    --model-type ${MODEL_TYPE} \
    --output work_dirs/hq_sam_${MODEL_TYPE}
