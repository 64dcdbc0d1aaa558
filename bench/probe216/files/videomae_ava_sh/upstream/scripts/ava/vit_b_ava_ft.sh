#!/usr/bin/env bash
# Fine-tune VideoMAE ViT-B/16 (K400 self-supervised pre-training) on AVA v2.2.
# 64 GPUs = 8 nodes x 8 A100; run once per node:  bash vit_b_ava_ft.sh <node_rank> <master_addr>
set -x

# Set the path to save checkpoints
OUTPUT_DIR='YOUR_PATH/ava_videomae_pretrain_base_patch16_224_frame_16x4_tube_mask_ratio_0.9_e1600/finetune'
# path to AVA frame lists / annotations
DATA_PATH='YOUR_PATH/data/ava'
# path to pretrain model
MODEL_PATH='YOUR_PATH/k400_videomae_pretrain_base_patch16_224_frame_16x4_tube_mask_ratio_0.9_e1600/checkpoint.pth'

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=eth0
export NCCL_DEBUG=WARN

# batch_size can be adjusted according to number of GPUs
# this script is for 64 GPUs (8 nodes x 8 GPUs)
OMP_NUM_THREADS=1 python -m torch.distributed.launch --nproc_per_node=8 \
    --master_port 12320 --nnodes=8 --node_rank=$1 --master_addr=$2 \
    run_class_finetuning.py \
    --model vit_base_patch16_224 \
    --data_set AVA \
    --nb_classes 80 \
    --data_path ${DATA_PATH} \
    --finetune ${MODEL_PATH} \
    --log_dir ${OUTPUT_DIR} \
    --output_dir ${OUTPUT_DIR} \
    --batch_size 8 \
    --num_sample 1 \
    --input_size 224 \
    --short_side_size 224 \
    --save_ckpt_freq 10 \
    --num_frames 16 \
    --sampling_rate 4 \
    --opt adamw \
    --lr 5e-4 \
    --layer_decay 0.75 \
    --opt_betas 0.9 0.999 \
    --weight_decay 0.05 \
    --epochs 30 \
    --dist_eval \
    --test_num_segment 5 \
    --test_num_crop 3 \
    --use_xformers \
    --enable_deepspeed
