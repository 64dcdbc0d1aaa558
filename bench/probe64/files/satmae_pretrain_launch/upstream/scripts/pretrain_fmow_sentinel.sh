#!/bin/bash
# SatMAE group-channel pre-training on fMoW-Sentinel, 8 x A100 per node.
# Usage: bash scripts/pretrain_fmow_sentinel.sh <nnodes> <node_rank> <master_addr>

NNODES=${1:-1}
NODE_RANK=${2:-0}
MASTER_ADDR=${3:-127.0.0.1}
MASTER_PORT=29201
GPUS_PER_NODE=8

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0
export NCCL_P2P_LEVEL=NVL
export OMP_NUM_THREADS=8
export TORCH_DISTRIBUTED_DEBUG=OFF
export CUDA_LAUNCH_BLOCKING=0

OUT_DIR=./experiments/pretrain/fmow_sentinel_group_c
mkdir -p ${OUT_DIR}

python -m torch.distributed.launch \
    --nproc_per_node=${GPUS_PER_NODE} \
    --nnodes=${NNODES} \
    --node_rank=${NODE_RANK} \
    --master_addr=${MASTER_ADDR} \
    --master_port=${MASTER_PORT} \
    main_pretrain.py \
    --batch_size 16 --accum_iter 16 \
    --norm_pix_loss --epochs 50 \
    --blr 0.0001 --mask_ratio 0.75 \
    --input_size 96 --patch_size 8 \
    --model mae_vit_large_patch16 \
    --model_type group_c \
    --dataset_type sentinel \
    --dropped_bands 0 9 10 \
    --grouped_bands 0 1 2 6 --grouped_bands 3 4 5 7 --grouped_bands 8 9 \
    --train_path /data/fmow-sentinel/train.csv \
    --output_dir ${OUT_DIR} \
    --log_dir ${OUT_DIR} \
    --num_workers 8 \
    --device cuda

# fine-tune from the last checkpoint on a single node with torchrun
torchrun --nproc_per_node=${GPUS_PER_NODE} --master_port=${MASTER_PORT} main_finetune.py \
    --batch_size 8 --accum_iter 16 \
    --model vit_large_patch16 --model_type group_c \
    --epochs 30 --blr 2e-4 --layer_decay 0.75 \
    --weight_decay 0.05 --drop_path 0.2 --reprob 0.25 --mixup 0.8 --cutmix 1.0 \
    --finetune ${OUT_DIR}/checkpoint-49.pth \
    --output_dir ${OUT_DIR}/finetune --log_dir ${OUT_DIR}/finetune \
    --dist_eval --num_workers 8
