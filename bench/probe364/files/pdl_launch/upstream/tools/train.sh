#!/usr/bin/env bash
# Launch multi-GPU training of Panoptic-DeepLab on a single node.
#
# Usage:
#   bash tools/train.sh configs/panoptic_deeplab_R52_os16_cityscapes.yaml 4 [extra yacs opts]
#
# The number of GPUs must match the length of GPUS in the config file.

set -x

CONFIG=$1
NGPUS=${2:-4}
PORT=${PORT:-29500}
PY_ARGS=${@:3}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export OMP_NUM_THREADS=1

python -m torch.distributed.launch \
    --nproc_per_node=$NGPUS \
    --master_port=$PORT \
    tools/train_net.py \
    --cfg $CONFIG \
    $PY_ARGS
