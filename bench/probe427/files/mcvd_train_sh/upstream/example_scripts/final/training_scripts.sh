#!/bin/bash
# MCVD training recipes (Stochastic Moving MNIST / KTH / BAIR / Cityscapes)
# Usage: sh ./example_scripts/final/training_scripts.sh
# Set these two before running:
export DIR="/path/to/experiments"
export DATA="/path/to/datasets"

nvidia-smi

# SMMNIST: 5 past frames -> 5 future frames, concat conditioning
export CUDA_VISIBLE_DEVICES=0,1,2,3
python main.py --config configs/smmnist_DDPM_big5.yml \
    --data_path ${DATA}/MNIST \
    --exp ${DIR}/smmnist_cat \
    --ni

# KTH 64x64: 5 past frames -> 5 future frames, with spatin
export CUDA_VISIBLE_DEVICES=4,5,6,7
python main.py --config configs/kth64_big.yml \
    --data_path ${DATA}/KTH64_h5 \
    --exp ${DIR}/kth64_big_spade \
    --config_mod model.spade=True sampling.num_frames_pred=20 data.num_frames=5 data.num_frames_cond=10 training.batch_size=64 \
    --ni

# BAIR 64x64: 2 past frames -> 5 future frames
CUDA_VISIBLE_DEVICES=0,1,2,3 python main.py --config configs/bair_big.yml \
    --data_path ${DATA}/BAIR_h5 \
    --exp ${DIR}/bair64_big192_5c2_pmask50_unetm \
    --config_mod training.snapshot_freq=50000 sampling.num_frames_pred=28 data.prob_mask_cond=0.50 data.num_frames=5 data.num_frames_cond=2 training.batch_size=64 model.ngf=192 model.n_head_channels=192 \
    --ni
