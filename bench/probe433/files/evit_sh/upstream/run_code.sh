#!/bin/bash
# EViT-DeiT-S, keep rate 0.7, token fusion on; 8 GPUs x 128 images.
# Speed is measured on a single GPU at the start (--test_speed).

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
now=$(date +"%Y%m%d_%H%M%S")
logdir=train_log/exp_$now
datapath="/path/to/imagenet"
ckpt="https://dl.fbaipublicfiles.com/deit/deit_small_patch16_224-cd65a155.pth"

echo "output dir: $logdir"

python3 -m torch.distributed.launch --nproc_per_node=8 --master_port=29501 --use_env \
	main.py \
	--model deit_small_patch16_shrink_base \
	--fuse_token \
	--base_keep_rate 0.7 \
	--input-size 224 \
	--sched cosine \
	--lr 2e-5 \
	--min-lr 2e-6 \
	--weight-decay 1e-6 \
	--batch-size 128 \
	--shrink_start_epoch 0 \
	--warmup-epochs 0 \
	--shrink_epochs 0 \
	--epochs 30 \
	--dist-eval \
	--finetune $ckpt \
	--data-path $datapath \
	--output_dir $logdir \
	--test_speed

echo "output dir for the last exp: $logdir"
