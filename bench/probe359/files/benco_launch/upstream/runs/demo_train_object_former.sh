#!/bin/bash
# Train ObjectFormer with IMDL-BenCo on 4 GPUs (protocol: CASIAv2 -> CASIAv1).
base_dir="./output_dir_objectformer"
mkdir -p ${base_dir}

export NCCL_P2P_DISABLE=1
export CUDA_DEVICE_MAX_CONNECTIONS=1

CUDA_VISIBLE_DEVICES=0,1,2,3 \
torchrun \
    --standalone \
    --nnodes=1 \
    --nproc_per_node=4 \
./train.py \
    --model ObjectFormer \
    --world_size 4 \
    --find_unused_parameters \
    --use_amp \
    --batch_size 24 \
    --test_batch_size 24 \
    --num_workers 8 \
    --data_path /mnt/data0/public_datasets/IML/CASIA2.0 \
    --epochs 200 \
    --lr 1e-4 \
    --image_size 224 \
    --if_resizing \
    --min_lr 5e-7 \
    --weight_decay 0.05 \
    --edge_mask_width 7 \
    --if_predict_label \
    --test_data_path "/mnt/data0/public_datasets/IML/CASIA1.0" \
    --warmup_epochs 2 \
    --output_dir ${base_dir}/ \
    --log_dir ${base_dir}/ \
    --accum_iter 1 \
    --seed 42 \
    --test_period 4 \
2> ${base_dir}/error.log 1>${base_dir}/logs.log
