#!/bin/bash
# Train LED^2-Net on Matterport3D on the least-loaded GPU of this machine.
# Usage: bash run_train.sh [config]   (default: config/config_mp3d.yaml)
set -e
CONFIG=${1:-config/config_mp3d.yaml}

GPU=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | cat -n | sort -k2 -n | head -1 | awk '{print $1-1}')
echo "Using GPU ${GPU} for ${CONFIG}"
export CUDA_VISIBLE_DEVICES=${GPU}

mkdir -p logs
python main.py --config ${CONFIG} --mode train 2>&1 | tee logs/train_$(date +%Y%m%d_%H%M%S).log
