#!/usr/bin/env bash
# Train DINO-4scale R50 on COCO with 8 GPUs on one node.
# Usage: bash scripts/DINO_train_dist.sh /path/to/your/COCODIR
coco_path=$1
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=4

python -m torch.distributed.launch --nproc_per_node=8 main.py \
	--output_dir logs/DINO/R50-MS4-%j \
	-c config/DINO/DINO_4scale.py --coco_path $coco_path \
	--options dn_scalar=100 embed_init_tgt=TRUE \
	dn_label_coef=1.0 dn_bbox_coef=1.0 use_ema=False \
	dn_box_noise_scale=1.0
