#!/usr/bin/env bash
# Training / testing commands for EDVR (video SR + video deblurring on REDS).
# Run from codes/. Experiments and tb_logger folders are created in ../
set -e

# check the GPUs first; EDVR-L deblur needs ~20 GB per card with the default patch size
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

##### single GPU training (image SR)
# python train.py -opt options/train/train_SRResNet.yml
# python train.py -opt options/train/train_ESRGAN.yml

##### distributed training
# 8 GPUs, EDVR-M without TSA (SR), then fine-tune with TSA
python -m torch.distributed.launch --nproc_per_node=8 --master_port=4321 train.py -opt options/train/train_EDVR_woTSA_M.yml --launcher pytorch
python -m torch.distributed.launch --nproc_per_node=8 --master_port=4321 train.py -opt options/train/train_EDVR_M.yml --launcher pytorch

# REDS deblur (HR_in + predeblur) on the second half of the node, next to another job
CUDA_VISIBLE_DEVICES=4,5,6,7 python -m torch.distributed.launch --nproc_per_node=4 --master_port=4322 train.py -opt options/train/train_EDVR_L_deblur_REDS.yml --launcher pytorch

##### testing
python test_Vid4_REDS4_with_GT.py
