#!/usr/bin/env bash

GPUS=$1
CONFIG=$2
PORT=${PORT:-4321}

# usage
if [ $# -lt 2 ] ;then
    echo "usage:"
    echo "./scripts/dist_train.sh [number of gpu] [path to option file]"
    exit
fi

# pin the run to the first $GPUS cards unless the caller already chose some
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((GPUS-1)))}
# consumer cards (RTX 3090/4090) hang on P2P without this
export NCCL_P2P_DISABLE=1
export OMP_NUM_THREADS=4

PYTHONPATH="$(dirname $0)/..:${PYTHONPATH}" \
python -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT \
    pyiqa/train.py -opt $CONFIG --launcher pytorch ${@:3}
