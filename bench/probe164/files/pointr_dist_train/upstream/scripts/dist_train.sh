#!/usr/bin/env bash

set -x
NGPUS=$1
PORT=$2
PY_ARGS=${@:3}

# P2P hangs on some consumer cards (RTX 3090/4090 boxes) without this
export NCCL_P2P_DISABLE=1
export OMP_NUM_THREADS=4

CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3,4,5,6,7} python -m torch.distributed.launch --master_port=${PORT} --nproc_per_node=${NGPUS} main.py --launcher pytorch ${PY_ARGS}
