#!/usr/bin/env bash
# Usage: bash tools/dist_train.sh configs/stanford2d3d/trans4pass_tiny_1080x1080.yaml 4 [extra opts]
CONFIG=$1
GPUS=$2
PORT=${PORT:-29500}

# pick the GPUs for this run (override with GPU_IDS=4,5,6,7)
export CUDA_VISIBLE_DEVICES=${GPU_IDS:-0,1,2,3}
export OMP_NUM_THREADS=1
# export NCCL_DEBUG=INFO

PYTHONPATH=$PYTHONPATH:$(dirname "$0")/.. \
python -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT \
    $(dirname "$0")/train.py --config-file $CONFIG ${@:3}
