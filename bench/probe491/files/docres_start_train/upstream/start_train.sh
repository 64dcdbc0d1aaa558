#!/bin/bash
# DocRes multi-task training on 4 GPUs (the paper used 8x A100 80G).
# The first four cards of the node are reserved for the annotation service.

export CUDA_VISIBLE_DEVICES=4,5,6,7
export OMP_NUM_THREADS=4
export NCCL_P2P_DISABLE=0
export NCCL_DEBUG=WARN

NPROC=4
PORT=${PORT:-29511}

python -m torch.distributed.launch \
    --nproc_per_node=${NPROC} \
    --master_port=${PORT} \
    --use_env \
    train.py \
    --config configs/train.json \
    --batch_size 4 \
    --total_iter 100000 \
    --im_size 256 \
    --amp \
    --logdir ./checkpoints/docres_$(date +%Y%m%d) \
    "$@"
