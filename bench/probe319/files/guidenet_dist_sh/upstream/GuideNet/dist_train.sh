#!/usr/bin/env bash
# Usage: sh dist_train.sh GN.yaml 4 [extra args]
# Launches one process per GPU with torch.distributed.launch (NCCL backend).
CONFIG=$1
NGPUS=${2:-4}
PORT=${PORT:-29512}
GPUS=${GPUS:-0,1,2,3}

export CUDA_VISIBLE_DEVICES=${GPUS}
export NCCL_DEBUG=INFO
export NCCL_SOCKET_IFNAME=eth0
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=4

# check that all GPUs are visible before launching
python -c "import torch; assert torch.cuda.device_count() >= ${NGPUS}, 'not enough GPUs'"

python -m torch.distributed.launch --nproc_per_node=${NGPUS} --master_port=${PORT} \
    train.py --config ${CONFIG} ${@:3}
