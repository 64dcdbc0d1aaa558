#!/usr/bin/env bash
# Train / evaluate CALF on SoccerNet-v2 (ResNet-PCA512 features).
# Usage: bash train_calf.sh /path/to/SoccerNet [GPU_ID]
set -e

SOCCERNET_PATH=${1:-/path/to/SoccerNet}
GPU=${2:-0}

# conda activate CALF-pytorch
echo "Using GPU ${GPU} ($(nvidia-smi --query-gpu=name --format=csv,noheader -i ${GPU}))"

cd "$(dirname "$0")"

python src/main.py \
    --SoccerNet_path="${SOCCERNET_PATH}" \
    --features=ResNET_TF2_PCA512.npy \
    --model_name=CALF_v2 \
    --batch_size 32 \
    --evaluation_frequency 20 \
    --GPU ${GPU}

# Evaluate the released checkpoint only
python src/main.py \
    --SoccerNet_path="${SOCCERNET_PATH}" \
    --features=ResNET_TF2_PCA512.npy \
    --model_name=CALF_v2 \
    --test_only \
    --GPU ${GPU}
