#!/usr/bin/env bash
# Launch multi-GPU training on a single node (or several, with NNODES>1).
#
#   CUDA_VISIBLE_DEVICES=0,1,2,3 bash tools/dist_train.sh ${CONFIG} 4 [--amp]
#
# Any extra arguments after GPUS are forwarded to tools/train.py.

CONFIG=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}

# Default to every visible card when the caller did not restrict them.
if [ -z "${CUDA_VISIBLE_DEVICES}" ]; then
    export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((GPUS - 1)))
fi

# NCCL tuning for our 8xA100 boxes (NVLink inside the node, IB between nodes).
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-0}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

echo "Training ${CONFIG} on ${GPUS} GPU(s): ${CUDA_VISIBLE_DEVICES}"
nvidia-smi --query-gpu=index,name,memory.used --format=csv,noheader

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
