#!/usr/bin/env bash
# Fine-tune Swin-B (ImageNet-22K pretrained) on ImageNet-1K at 224x224.
# Tested on 2 nodes x 8 V100-32G. Adjust NNODES / GPUS_PER_NODE / batch size for your cluster.
#
# usage: bash scripts/train_swin_base_22kto1k.sh <node_rank> <master_addr> [extra args]

set -x

NODE_RANK=${1:-0}
MASTER_ADDR=${2:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-12345}
NNODES=${NNODES:-2}
GPUS_PER_NODE=${GPUS_PER_NODE:-8}
shift 2

DATA_PATH=${DATA_PATH:-/mnt/data/imagenet}
PRETRAINED=${PRETRAINED:-pretrained/swin_base_patch4_window7_224_22k.pth}
OUTPUT=${OUTPUT:-output/swin_base_22kto1k}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export OMP_NUM_THREADS=8

# NCCL settings for our IB cluster
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0

# print the GPU layout once for the log
nvidia-smi --query-gpu=index,name,memory.total --format=csv

python -m torch.distributed.launch \
    --nnodes ${NNODES} \
    --node_rank ${NODE_RANK} \
    --nproc_per_node ${GPUS_PER_NODE} \
    --master_addr ${MASTER_ADDR} \
    --master_port ${MASTER_PORT} \
    main.py \
    --cfg configs/swin/swin_base_patch4_window7_224_22kto1k_finetune.yaml \
    --pretrained ${PRETRAINED} \
    --data-path ${DATA_PATH} \
    --batch-size 64 \
    --accumulation-steps 2 \
    --output ${OUTPUT} \
    --fused_window_process \
    --fused_layernorm \
    "$@"

# evaluation of the best checkpoint on a single GPU
CUDA_VISIBLE_DEVICES=0 python -m torch.distributed.launch --nproc_per_node 1 --master_port 12346 main.py \
    --eval --cfg configs/swin/swin_base_patch4_window7_224_22kto1k_finetune.yaml \
    --resume ${OUTPUT}/swin_base_patch4_window7_224_22kto1k_finetune/default/ckpt_epoch_29.pth \
    --data-path ${DATA_PATH}
