#!/bin/bash
# ToCo, PASCAL VOC 2012, ViT-B/16 backbone, 2 x A100 (40G)

file=dist_train_voc_seg_neg.py
config=configs/voc_seg_neg.yaml

export CUDA_VISIBLE_DEVICES=0,1
export OMP_NUM_THREADS=4
export NCCL_P2P_DISABLE=1

echo python -m torch.distributed.launch --nproc_per_node=2 --master_port=29501 $file --config $config --pooling gmp --crop_size 448 --work_dir work_dir_voc
python -m torch.distributed.launch --nproc_per_node=2 --master_port=29501 $file --config $config --pooling gmp --crop_size 448 --work_dir work_dir_voc
