#!/usr/bin/env bash
# MAE ViT-Base pre-training on one 8-GPU node (800 epochs, effective batch 4096 with accum_iter 8).
set -e

IMAGENET_DIR=${IMAGENET_DIR:-/datasets/imagenet}
OUTPUT_DIR=${OUTPUT_DIR:-./output_dir/mae_vit_base}
NGPUS=${NGPUS:-8}

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=8

mkdir -p ${OUTPUT_DIR}
nvidia-smi

python -m torch.distributed.launch --nproc_per_node=${NGPUS} --nnodes=1 --master_port=29500 main_pretrain.py \
    --batch_size 64 \
    --accum_iter 8 \
    --model mae_vit_base_patch16 \
    --norm_pix_loss \
    --mask_ratio 0.75 \
    --epochs 800 \
    --warmup_epochs 40 \
    --blr 1.5e-4 --weight_decay 0.05 \
    --data_path ${IMAGENET_DIR} \
    --output_dir ${OUTPUT_DIR} \
    --log_dir ${OUTPUT_DIR} 2>&1 | tee ${OUTPUT_DIR}/train.log

# fine-tune on the same node after pre-training
python -m torch.distributed.launch --nproc_per_node=${NGPUS} main_finetune.py \
    --batch_size 32 \
    --model vit_base_patch16 \
    --finetune ${OUTPUT_DIR}/checkpoint-799.pth \
    --epochs 100 \
    --blr 5e-4 --layer_decay 0.65 \
    --weight_decay 0.05 --drop_path 0.1 --reprob 0.25 --mixup 0.8 --cutmix 1.0 \
    --dist_eval --data_path ${IMAGENET_DIR}
