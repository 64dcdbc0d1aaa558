#!/usr/bin/env bash
# Copyright (c) OpenMMLab. All rights reserved.
#
# Single- or multi-node distributed training for MMSegmentation.
#
#   ./tools/dist_train.sh ${CONFIG_FILE} ${GPU_NUM} [optional arguments]
#   GPU_IDS=4,5,6,7 PORT=29501 ./tools/dist_train.sh ${CONFIG_FILE} 4
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.0.0.1 ./tools/dist_train.sh ${CONFIG_FILE} 8
#
# Extra arguments after GPU_NUM are passed to tools/train.py, e.g.
#   --work-dir work_dirs/exp1 --amp --cfg-options model.backbone.depth=101

CONFIG=$1
GPUS=$2
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
PORT=${PORT:-29500}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}

if [ -z "${CONFIG}" ] || [ -z "${GPUS}" ]; then
    echo "usage: $0 CONFIG GPU_NUM [train.py args]" >&2
    exit 1
fi

# restrict the job to the requested devices (default: the first ${GPUS})
export CUDA_VISIBLE_DEVICES=${GPU_IDS:-$(seq -s, 0 $((GPUS - 1)))}

# make sure enough devices are visible before torch.distributed starts,
# otherwise the ranks above the device count crash with an opaque error
NUM_VISIBLE=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
if [ "${NUM_VISIBLE}" -lt "${GPUS}" ]; then
    echo "requested ${GPUS} GPUs but only ${NUM_VISIBLE} are visible" >&2
    exit 1
fi

# fail fast on NCCL errors instead of hanging until the timeout
export NCCL_ASYNC_ERROR_HANDLING=1
export NCCL_P2P_DISABLE=${NCCL_P2P_DISABLE:-0}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

# TF32 matmuls are fine for segmentation training
export NVIDIA_TF32_OVERRIDE=${NVIDIA_TF32_OVERRIDE:-1}

LOG_DIR=${LOG_DIR:-work_dirs/launch_logs}
mkdir -p ${LOG_DIR}

# resume automatically when the work dir already holds a checkpoint
EXTRA_ARGS=""
if [ -n "${AUTO_RESUME}" ]; then
    EXTRA_ARGS="--resume"
fi

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
python -m torch.distributed.launch \
    --nnodes=$NNODES \
    --node_rank=$NODE_RANK \
    --master_addr=$MASTER_ADDR \
    --nproc_per_node=$GPUS \
    --master_port=$PORT \
    $(dirname "$0")/train.py \
    $CONFIG \
    --launcher pytorch ${EXTRA_ARGS} ${@:3} 2>&1 | tee ${LOG_DIR}/node${NODE_RANK}.log
