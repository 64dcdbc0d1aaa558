#!/bin/bash

# Distributed training on a single node with multiple GPUs
# Usage:
#   ./scripts/dist_train.sh $PY_FILE $PARAMS $NUM_GPUS $PORT [other args]
# e.g.
#   ./scripts/dist_train.sh slotformer/base_slots/train.py \
#       slotformer/base_slots/configs/savi/savi_movi_params.py 4 29501 --fp16 --cudnn

set -x

PY_FILE=$1
PARAMS=$2
GPUS=$3
PORT=$4
PY_ARGS=${@:5}

# pick GPUs that are currently idle unless the user already restricted them
if [ -z "$CUDA_VISIBLE_DEVICES" ]; then
    FREE_GPUS=$(nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits \
        | awk -F', ' '$2 < 1000 {print $1}' | head -n $GPUS | paste -sd, -)
    export CUDA_VISIBLE_DEVICES=$FREE_GPUS
fi
echo "Using GPUs: $CUDA_VISIBLE_DEVICES"

export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN

python -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT \
    $PY_FILE --params $PARAMS --ddp $PY_ARGS
