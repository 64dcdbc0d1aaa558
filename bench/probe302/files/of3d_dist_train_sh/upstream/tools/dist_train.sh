#!/usr/bin/env bash
# usage: bash tools/dist_train.sh CONFIG NUM_GPUS [extra train.py args]
#   e.g. bash tools/dist_train.sh configs/oneformer3d_1xb4_scannet.py 4 --amp

CONFIG=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}

# avoid thread oversubscription: every rank already has its own GPU
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
# fail fast instead of hanging forever when one rank dies in a collective
export NCCL_ASYNC_ERROR_HANDLING=1

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
python -m torch.distributed.launch \
    --nnodes=$NNODES \
    --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR \
    --nproc_per_node=$GPUS \
    --master_port=$PORT \
    $(dirname "$0")/train.py \
    $CONFIG \
    --launcher pytorch ${@:3}
