#!/usr/bin/env bash
# Multi-node / multi-GPU launcher for Open-GroundingDino.
# usage: bash scripts/train_dist.sh ${GPU_NUM} ${CFG} ${DATASETS} ${OUTPUT_DIR}
set -x

GPU_NUM=$1
CFG=$2
DATASETS=$3
OUTPUT_DIR=$4
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}

# which GPUs this node should use (override from the environment)
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}

# NCCL tuning for our IB cluster
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0
export NCCL_P2P_LEVEL=NVL

# Change ``pretrain_model_path`` to use a different pretrain.
# (e.g. GroundingDINO pretrain, DINO pretrain, Swin Transformer pretrain.)
# If you don't want to use any pretrained model, just ignore this parameter.

# show the GPUs we are about to use
nvidia-smi --query-gpu=index,name,memory.total --format=csv

python -m torch.distributed.launch \
        --nproc_per_node=${GPU_NUM} \
        --nnodes=${NNODES} \
        --node_rank=${NODE_RANK} \
        --master_addr=${MASTER_ADDR} \
        --master_port=${PORT} \
        main.py \
        --output_dir ${OUTPUT_DIR} \
        -c ${CFG} \
        --datasets ${DATASETS}  \
        --pretrain_model_path /path/to/groundingdino_swint_ogc.pth \
        --options text_encoder_type=/path/to/bert-base-uncased

# single-GPU debugging:
#   CUDA_LAUNCH_BLOCKING=1 python main.py --output_dir logs/debug -c ${CFG} --datasets ${DATASETS} --debug

# evaluation only
# python -m torch.distributed.launch --nproc_per_node=${GPU_NUM} main.py \
#     --output_dir ${OUTPUT_DIR}/eval -c ${CFG} --datasets ${DATASETS} --eval \
#     --resume ${OUTPUT_DIR}/checkpoint_best_regular.pth
