#!/usr/bin/env bash
# Train / test / visualise DNANet on NUDT-SIRST.
# All experiments in the paper were run on a single NVIDIA GPU (RTX 3090, 24 GB).
set -e

DATASET=NUDT-SIRST
MODEL_DIR=NUDT-SIRST_DNANet_31_07_2021_14_50_57_wDS/mIoU__DNANet_NUDT-SIRST_epoch.pth.tar

export CUDA_VISIBLE_DEVICES=0

# train
python train.py --base_size 256 --crop_size 256 --epochs 1500 --dataset ${DATASET} \
    --split_method 50_50 --model DNANet --backbone resnet_18 --deep_supervision True \
    --train_batch_size 16 --test_batch_size 16 --mode TXT

# test
python test.py --base_size 256 --crop_size 256 --st_model ${DATASET}_DNANet_wDS \
    --model_dir ${MODEL_DIR} --dataset ${DATASET} --split_method 50_50 --model DNANet \
    --backbone resnet_18 --deep_supervision True --test_batch_size 1 --mode TXT

# visualise (writes pred/GT pairs and side-by-side figures under dataset/${DATASET}/visulization_result)
python visulization.py --base_size 256 --crop_size 256 --st_model ${DATASET}_DNANet_wDS \
    --model_dir ${MODEL_DIR} --dataset ${DATASET} --split_method 50_50 --model DNANet \
    --backbone resnet_18 --deep_supervision True --test_batch_size 1 --mode TXT
