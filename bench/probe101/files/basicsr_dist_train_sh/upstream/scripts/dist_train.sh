#!/usr/bin/env bash
# Usage: ./scripts/dist_train.sh 8 options/train/BasicVSRPP/train_BasicVSRPP_REDS.yml [--auto_resume]
#        GPU_IDS=4,5,6,7 ./scripts/dist_train.sh 4 options/train/...yml

GPUS=$1
CONFIG=$2
PORT=${PORT:-4321}
GPU_IDS=${GPU_IDS:-0,1,2,3,4,5,6,7}

# usage
if [ $# -lt 2 ] ;then
    echo "usage:"
    echo "./scripts/dist_train.sh [number of gpu] [path to option file]"
    exit
fi

export CUDA_VISIBLE_DEVICES=${GPU_IDS}
export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4

PYTHONPATH="$(dirname $0)/..:${PYTHONPATH}" \
python -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT \
    basicsr/train.py -opt $CONFIG --launcher pytorch ${@:3}
