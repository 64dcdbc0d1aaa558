#!/bin/bash
# -*- coding: utf-8 -*-
# Train PGL-SUM on the five random splits of SumMe, one after the other, on a single GPU.
# Usage: sh model/run_summe_splits.sh [gpu id]
GPU=${1:-0}
export CUDA_VISIBLE_DEVICES=$GPU

base_path="../PGL-SUM/Summaries/PGL-SUM/exp1/SumMe"
for i in 0 1 2 3 4; do
  python model/main.py --split_index "$i" --n_epochs 400 --batch_size 20 --video_type 'SumMe'
done

# Compute the F-scores of every epoch, for every split
for i in 0 1 2 3 4; do
  path="$base_path/results/split$i"
  python evaluation/compute_fscores.py --path "$path" --dataset 'SumMe' --eval 'max'
done

# Pick the model of the epoch with the lowest training loss (see evaluation/choose_best_epoch.py)
python evaluation/choose_best_epoch.py "../PGL-SUM/Summaries/PGL-SUM/exp1" "SumMe"
