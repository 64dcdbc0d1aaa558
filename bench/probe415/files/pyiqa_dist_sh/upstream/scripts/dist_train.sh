#!/usr/bin/env bash
# Usage: bash scripts/dist_train.sh <NUM_GPU> <CONFIG_YML> [GPU_IDS] [extra args]
# e.g.   bash scripts/dist_train.sh 2 options/train/TOPIQ/train_TOPIQ_res50_koniq.yml 2,3

GPUS=$1
CONFIG=$2
GPU_IDS=${3:-"0,1,2,3,4,5,6,7"}
PORT=${PORT:-4321}

# check that the requested gpus are idle before launching
nvidia-smi --query-gpu=index,memory.used,utilization.gpu --format=csv,noheader

# usage
if [ $# -lt 2 ] ;then
    echo "usage:"
    echo "./scripts/dist_train.sh [number of gpu] [path to option file] [gpu ids]"
    exit
fi

PYTHONPATH="$(dirname $0)/..:${PYTHONPATH}" \
CUDA_VISIBLE_DEVICES=$GPU_IDS \
python -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT \
    pyiqa/train.py -opt $CONFIG --launcher pytorch ${@:4}
