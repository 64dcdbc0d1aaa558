#!/usr/bin/env bash
# Usage: ./tools/dist_train.sh ./projects/configs/surroundocc/surroundocc.py 8
#        NNODES=2 NODE_RANK=1 MASTER_ADDR=10.0.0.5 ./tools/dist_train.sh <config> 8

CONFIG=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-28509}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}

# pick the cards; on the shared 8x A100 box we usually leave 0-1 for the eval job
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_IB_DISABLE=1
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

WORK_DIR=${WORK_DIR:-./work_dirs/$(basename ${CONFIG%.*})}
mkdir -p ${WORK_DIR}

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
python -m torch.distributed.launch \
    --nnodes=$NNODES \
    --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR \
    --nproc_per_node=$GPUS \
    --master_port=$PORT \
    $(dirname "$0")/train.py \
    $CONFIG \
    --work-dir ${WORK_DIR} \
    --seed 0 \
    --launcher pytorch ${@:3} --deterministic 2>&1 | tee ${WORK_DIR}/train_$(date +%Y%m%d_%H%M%S).log
