#!/bin/bash
# Reproduce the GHRN numbers on YelpChi (Table 3).
# Usage: bash scripts/run_yelp.sh [gpu_id]

GPU=${1:-0}
export CUDA_VISIBLE_DEVICES=$GPU
export CUBLAS_WORKSPACE_CONFIG=:4096:8
export DGLBACKEND=pytorch

LOG_DIR=logs/yelp
mkdir -p $LOG_DIR

# homogeneous BWGNN backbone, 40% / 1% training labels
for ratio in 0.4 0.01; do
    python main.py --dataset yelp --homo 1 --train_ratio $ratio --del_ratio 0.015 \
        --epoch 100 --run 10 --gpu 0 | tee $LOG_DIR/homo_tr${ratio}.log
done

# heterogeneous BWGNN backbone
for ratio in 0.4 0.01; do
    python main.py --dataset yelp --homo 0 --train_ratio $ratio --del_ratio 0.01 \
        --epoch 100 --run 10 --gpu 0 | tee $LOG_DIR/hetero_tr${ratio}.log
done

grep -h "MF1-mean" $LOG_DIR/*.log
