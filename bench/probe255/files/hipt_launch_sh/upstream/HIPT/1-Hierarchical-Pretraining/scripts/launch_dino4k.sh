#!/usr/bin/env bash
# Stage-2 HIPT pretraining: DINO on ViT-4K over pre-extracted ViT-256 feature grids.
# One node, 8x A100 40GB.  Run from 1-Hierarchical-Pretraining/.
set -e

DATA=${DATA:-/data/TCGA_4K/vit256_feature_grids}
OUT=${OUT:-./ckpts/pretrain/vit4k_xs_dino}
NGPU=${NGPU:-8}

export OMP_NUM_THREADS=8
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512

mkdir -p "$OUT"

CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 python -m torch.distributed.launch --nproc_per_node=$NGPU \
    main_dino4k.py \
    --arch vit4k_xs \
    --data_path "$DATA" \
    --output_dir "$OUT" \
    --epochs 100 \
    --batch_size_per_gpu 64 \
    --use_fp16 true \
    --local_crops_number 8 \
    --saveckp_freq 10 \
    2>&1 | tee "$OUT/train.log"
