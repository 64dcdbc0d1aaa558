#!/usr/bin/env bash
# Multi-GPU training for ZoomNet / ZoomNeXt-style COD models.
#   bash tools/dist_train.sh configs/zoomnet/zoomnet.py 4 --info exp1
# The 2nd argument is the number of GPUs; GPU_IDS picks which ones.
set -e

CONFIG=$1
GPUS=${2:-2}
PORT=${PORT:-29500}
GPU_IDS=${GPU_IDS:-"0,1,2,3"}

export CUDA_VISIBLE_DEVICES=${GPU_IDS}
export OMP_NUM_THREADS=4
export NCCL_P2P_DISABLE=1        # consumer cards (3090/4090) hang in P2P all-reduce without this
export NCCL_DEBUG=WARN

echo "Using GPUs: ${CUDA_VISIBLE_DEVICES} (nproc_per_node=${GPUS})"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

if [ ! -f "${CONFIG}" ]; then
    echo "config ${CONFIG} not found"
    exit 1
fi

PYTHONPATH="$(dirname $0)/..":$PYTHONPATH \
python -m torch.distributed.launch \
    --nproc_per_node=$GPUS \
    --master_port=$PORT \
    --use_env \
    main.py \
    --config $CONFIG \
    --model-name ZoomNet \
    ${@:3}

# evaluate the final weights on a single GPU
CUDA_VISIBLE_DEVICES=${GPU_IDS%%,*} python main.py \
    --config $CONFIG \
    --model-name ZoomNet \
    --load-from output/ZoomNet/pth/state_final.pth \
    --save-path output/ZoomNet/pre
