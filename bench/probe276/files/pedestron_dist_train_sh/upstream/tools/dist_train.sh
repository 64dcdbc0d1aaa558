#!/usr/bin/env bash
# Usage: ./tools/dist_train.sh configs/elephant/cityperson/cascade_hrnet.py 8 [--validate] [--work_dir ...]
# Pin the GPUs with CUDA_VISIBLE_DEVICES=0,1,2,3 ./tools/dist_train.sh ... if the box is shared.

PYTHON=${PYTHON:-"python"}

CONFIG=$1
GPUS=$2
PORT=${PORT:-29500}

# NCCL over InfiniBand is flaky on our nodes, fall back to sockets
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=1

$PYTHON -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT \
    $(dirname "$0")/train.py $CONFIG --launcher pytorch ${@:3}
