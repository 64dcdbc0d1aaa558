#!/bin/bash
#
# Train EINV2 on the DCASE2020 Task 3 development set.
#   bash scripts/train.sh [GPU_IDS] [CONFIG]
# e.g.
#   bash scripts/train.sh 0,1 ./configs/ein_seld/seld.yaml
#
set -e

GPU_IDS=${1:-0}
CONFIG_FILE=${2:-'./configs/ein_seld/seld.yaml'}
NUM_WORKERS=8

# The config's training.cuda_visible_devices is overwritten here so that the
# DataParallel wrapper sees exactly the GPUs given on the command line.
export CUDA_VISIBLE_DEVICES=$GPU_IDS
export OMP_NUM_THREADS=4

# Extract data
python seld/main.py -c $CONFIG_FILE preprocess --preproc_mode='extract_data' --dataset_type='dev'

# Extract scalar
python seld/main.py -c $CONFIG_FILE preprocess --preproc_mode='extract_scalar' --num_workers=$NUM_WORKERS

# Extract meta
python seld/main.py -c $CONFIG_FILE preprocess --preproc_mode='extract_meta' --dataset_type='dev'

# Train
python seld/main.py -c $CONFIG_FILE train --seed=$(shuf -i 0-10000 -n 1) --num_workers=$NUM_WORKERS

# Inference on the eval set with the checkpoints listed in the config
python seld/main.py -c $CONFIG_FILE infer --num_workers=$NUM_WORKERS
