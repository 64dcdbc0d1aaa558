#!/bin/bash
# Single-node multi-GPU training of IML-ViT on CASIAv2 (test on CASIAv1).
# Reference run: 2 x A40, batch 1 x accum 16 per GPU, ~2 days for 200 epochs.
base_dir="./output_dir"
mkdir -p ${base_dir}

CUDA_VISIBLE_DEVICES=2,3 \
torchrun \
    --standalone \
    --nnodes=1 \
    --nproc_per_node=2 \
main_train.py \
    --world_size 2 \
    --batch_size 1 \
    --data_path "/root/Dataset/CASIA2.0_revised/" \
    --epochs 200 \
    --lr 1e-4 \
    --min_lr 5e-7 \
    --weight_decay 0.05 \
    --edge_lambda 20 \
    --predict_head_norm "BN" \
    --vit_pretrain_path "/root/workspace/IML-ViT/pretrained-weights/mae_pretrain_vit_base.pth" \
    --test_data_path "/root/Dataset/CASIA1.0" \
    --warmup_epochs 4 \
    --output_dir ${base_dir}/ \
    --log_dir ${base_dir}/ \
    --accum_iter 8 \
    --seed 42 \
    --test_period 4 \
2> ${base_dir}/error.log 1>${base_dir}/logs.log
