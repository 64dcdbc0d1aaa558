#!/bin/bash
# Train Spann3R on 8 GPUs (tested on 8x A100 80GB, ~10 days for 120 epochs)
# Usage: bash scripts/train_spann3r.sh

export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN

CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 torchrun --nnodes=1 --nproc_per_node=8 --master_port=29600 train.py \
    --batch_size 2 \
    --accum_iter 1 \
    --epochs 120 \
    --lr 5e-5 \
    --min_lr 1e-6 \
    --warmup_epochs 10 \
    --num_workers 8 \
    --amp 1 \
    --train_dataset "10000 @ Co3d(split='train', ROOT='./data/co3d_preprocessed_50', resolution=224, num_frames=5, mask_bg='rand', transform=ColorJitter) + 10000 @ BlendMVS(split='train', ROOT='./data/blendmvs', resolution=224, num_frames=5, transform=ColorJitter) + 10000 @ Scannetpp(split='train', ROOT='./data/scannetpp', resolution=224, num_frames=5, transform=ColorJitter)" \
    --test_dataset "1000 @ Co3d(split='test', ROOT='./data/co3d_preprocessed_50', resolution=224, num_frames=5, seed=777)" \
    --output_dir ./output/spann3r_v1
