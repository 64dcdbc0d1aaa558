#!/bin/bash
# EVA-02-B/14 fine-tuning on ImageNet-1K at 448px (from MIM pt on IN-21K)
# 2 nodes x 8 A100-40G. Run once per node with NODE_RANK=0/1.

MODEL_NAME=eva02_base_patch14_xattn_fusedLN_NaiveSwiGLU_subln_RoPE

PRETRAIN_CKPT=/path/to/eva02_B_pt_in21k_p14.pt
DATA_PATH=/path/to/IN-1K
OUTPUT_DIR=/path/to/output/${MODEL_NAME}_ft_in1k_p14_448

export ENV_TYPE=deepspeed
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_IB_HCA=mlx5_0,mlx5_1,mlx5_2,mlx5_3
export NCCL_IB_GID_INDEX=3
export NCCL_SOCKET_IFNAME=bond0
export NCCL_DEBUG=INFO

NNODES=${NNODES:-2}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-29500}

python -m torch.distributed.launch --nproc_per_node=8 --nnodes=${NNODES} --node_rank=${NODE_RANK} \
    --master_addr=${MASTER_ADDR} --master_port=${MASTER_PORT} run_class_finetuning.py \
    --data_path ${DATA_PATH}/train \
    --disable_eval_during_finetuning \
    --nb_classes 1000 \
    --data_set image_folder \
    --output_dir ${OUTPUT_DIR} \
    --log_dir ${OUTPUT_DIR}/tb_log \
    --model ${MODEL_NAME} \
    --finetune ${PRETRAIN_CKPT} \
    --input_size 448 \
    --lr 3e-4 \
    --warmup_lr 0. \
    --min_lr 0. \
    --layer_decay 0.7 \
    --epochs 30 \
    --warmup_epochs 3 \
    --drop_path 0.1 \
    --clip_grad 0.0 \
    --weight_decay 0.05 \
    --batch_size 64 \
    --update_freq 1 \
    --smoothing 0.2 \
    --mixup 0. \
    --cutmix 0. \
    --crop_pct 1.0 \
    --save_ckpt_freq 1 \
    --enable_deepspeed \
    --zero_stage 0 \
    --opt adamw \
    --opt_betas 0.9 0.999 \
    --opt_eps 1e-8 \
    --dist_eval \
    --bf16 \
    --xattn
