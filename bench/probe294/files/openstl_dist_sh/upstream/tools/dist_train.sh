#!/usr/bin/env bash
# Usage:
#   bash tools/dist_train.sh ${CONFIG_FILE} ${GPUS} [optional arguments]
# e.g.
#   bash tools/dist_train.sh configs/mmnist/simvp/SimVP_gSTA.py 4 -d mmnist --lr 1e-3 --batch_size 4 --fp16 \
#       --ex_name mmnist_simvp_gsta

set -x

CFG=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}
PY_ARGS=${@:3}

# pin the job to the first $GPUS cards unless the caller already did
if [ -z "${CUDA_VISIBLE_DEVICES}" ]; then
    export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS-1)))
fi
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export OMP_NUM_THREADS=1

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
python -m torch.distributed.launch \
    --nnodes=$NNODES \
    --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR \
    --nproc_per_node=$GPUS \
    --master_port=$PORT \
    $(dirname "$0")/train.py \
    --config_file $CFG \
    --dist \
    --launcher="pytorch" ${PY_ARGS}
