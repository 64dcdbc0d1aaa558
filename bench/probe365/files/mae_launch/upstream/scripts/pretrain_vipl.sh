#!/usr/bin/env bash
# rPPG-MAE pre-training on VIPL-HR STMaps, one node with 4 GPUs.
# Usage: bash scripts/pretrain_vipl.sh <fold> [data_root]

FOLD=${1:-1}
DATA_ROOT=${2:-/data/VIPL-HR/stmaps}
OUT=./output_dir/pretrain_vipl_fold${FOLD}

export CUDA_VISIBLE_DEVICES=0,1,2,3
export OMP_NUM_THREADS=4
export NCCL_P2P_DISABLE=0
export NCCL_IB_DISABLE=1

NGPUS=$(nvidia-smi --query-gpu=name --format=csv,noheader | wc -l)
echo "Launching on ${NGPUS} GPUs (fold ${FOLD})"

mkdir -p ${OUT}

torchrun --nproc_per_node=4 --master_port=29501 main_pretrain.py \
    --batch_size 128 \
    --model mae_vit_base_patch16 \
    --norm_pix_loss \
    --mask_ratio 0.75 \
    --epochs 400 \
    --warmup_epochs 40 \
    --blr 1.5e-4 --weight_decay 0.05 \
    --input_size 224 \
    --fold ${FOLD} \
    --data_path ${DATA_ROOT} \
    --output_dir ${OUT} \
    --log_dir ${OUT} 2>&1 | tee ${OUT}/train.log
