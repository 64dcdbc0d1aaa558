#!/usr/bin/env bash
# Evaluate a MapTR checkpoint with the chamfer-distance AP metric.
# Usage: ./tools/dist_test_map.sh ${CONFIG} ${CHECKPOINT} ${GPUS}

CONFIG=$1
CHECKPOINT=$2
GPUS=$3
PORT=${PORT:-29503}

# restrict evaluation to the first GPUs unless the caller already did
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
python -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT \
    $(dirname "$0")/test.py $CONFIG $CHECKPOINT --launcher pytorch ${@:4} --eval chamfer
