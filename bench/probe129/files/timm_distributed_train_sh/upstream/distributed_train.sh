#!/bin/bash
# Launch timm train.py with torchrun, one process per GPU.
#
#   ./distributed_train.sh <num_gpus> [train.py args...]
#   GPU_IDS=4,5,6,7 ./distributed_train.sh 4 /data/imagenet --model resnet50 --amp
#
NUM_PROC=$1
shift

if [ -n "$GPU_IDS" ]; then
  export CUDA_VISIBLE_DEVICES=$GPU_IDS
fi

export OMP_NUM_THREADS=${OMP_NUM_THREADS:-4}
export NCCL_ASYNC_ERROR_HANDLING=1
MASTER_PORT=${MASTER_PORT:-29500}

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

torchrun --nproc_per_node=$NUM_PROC --master_port=$MASTER_PORT train.py "$@"
