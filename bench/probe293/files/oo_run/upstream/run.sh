#!/usr/bin/env bash
# Train (and optionally evaluate) an OpenOccupancy baseline.
#   bash run.sh ./projects/configs/baselines/CAM-R50_img1600_cascade_x4.py 8
#   NNODES=2 NODE_RANK=0 MASTER_ADDR=10.1.1.2 bash run.sh <config> 8
#   EVAL_CKPT=work_dirs/xxx/epoch_24.pth bash run.sh <config> 8   # eval only
set -x

CONFIG=$1
GPUS=$2
PORT=${PORT:-28108}
NNODES=${NNODES:-1}
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-"127.0.0.1"}

# export CUDA_LAUNCH_BLOCKING=1   # uncomment when chasing illegal memory access in the occ ops
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_ASYNC_ERROR_HANDLING=1
export PYTHONWARNINGS="ignore"

PYTHONPATH="$(dirname $0)":$PYTHONPATH

if [ -z "${EVAL_CKPT}" ]; then
    python -m torch.distributed.launch \
        --nnodes=$NNODES \
        --node_rank=$NODE_RANK \
        --master_addr=$MASTER_ADDR \
        --nproc_per_node=$GPUS \
        --master_port=$PORT \
        $(dirname "$0")/tools/train.py $CONFIG --launcher pytorch ${@:3} --deterministic
else
    python -m torch.distributed.launch \
        --nproc_per_node=$GPUS \
        --master_port=$PORT \
        $(dirname "$0")/tools/test.py $CONFIG ${EVAL_CKPT} --launcher pytorch --eval bbox ${@:3}
fi
