#!/bin/bash
# Reproduce Table 2 of the FairDisCo paper: one backbone per GPU, all in parallel.
# Logs go to ./logs/<backbone>_<holdout>.log

mkdir -p logs results

CUDA_VISIBLE_DEVICES=0 nohup python -u train_FairDisCo.py --backbone resnet18 --holdout_set random_holdout \
    --n_epochs 20 --out_dir results/resnet18 > logs/resnet18_random_holdout.log 2>&1 &
CUDA_VISIBLE_DEVICES=1 nohup python -u train_FairDisCo.py --backbone resnet50 --holdout_set random_holdout \
    --n_epochs 20 --out_dir results/resnet50 > logs/resnet50_random_holdout.log 2>&1 &
CUDA_VISIBLE_DEVICES=2 nohup python -u train_FairDisCo.py --backbone vgg16 --holdout_set random_holdout \
    --n_epochs 20 --out_dir results/vgg16 > logs/vgg16_random_holdout.log 2>&1 &
CUDA_VISIBLE_DEVICES=3 nohup python -u train_FairDisCo.py --backbone resnet18 --dataset ddi --holdout_set random_holdout \
    --image_dir ../data/ddi --csv_dir ../data/ddi_metadata.csv --n_epochs 30 --out_dir results/ddi_resnet18 \
    > logs/ddi_resnet18.log 2>&1 &

wait
echo "all runs finished"
nvidia-smi --query-gpu=index,memory.used --format=csv
