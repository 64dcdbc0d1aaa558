#!/bin/bash
# Trains the LA-2A models reported in the paper.
# One model per GPU, launched in the background; adjust the dataset path first.

ROOT=/import/c4dm-datasets/SignalTrain_LA2A_Dataset_1.1

CUDA_VISIBLE_DEVICES=0 python train_comp.py \
--root_dir $ROOT \
--preload \
--gpus 1 --model_type tcn \
--nblocks 4 \
--dilation_growth 10 \
--kernel_size 5 \
--causal \
--train_loss l1+stft \
--max_epochs 60 \
--precision 16 \
--batch_size 32 \
--lr 0.001 \
--num_workers 8 &

CUDA_VISIBLE_DEVICES=1 python train_comp.py \
--root_dir $ROOT \
--preload \
--gpus 1 --model_type tcn --nblocks 10 \
--dilation_growth 2 \
--kernel_size 15 \
--train_loss l1+stft \
--max_epochs 60 \
--precision 16 \
--batch_size 32 \
--lr 0.001 \
--num_workers 8 &

CUDA_VISIBLE_DEVICES=2 python train_comp.py \
--root_dir $ROOT \
--preload \
--gpus 1 --model_type lstm \
--num_layers 1 \
--hidden_size 32 \
--train_loss l1+stft \
--max_epochs 60 \
--precision 32 \
--batch_size 32 \
--lr 0.001 \
--num_workers 8 &

wait
echo "All runs finished. Check lightning_logs/bulk and nvidia-smi for stale processes."
