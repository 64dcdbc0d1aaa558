#!/usr/bin/env bash
# Distributed training launcher (one process per GPU).
#
# Usage:  ./train.sh Motion_Deblurring/Options/Deblurring_Restormer.yml
#         GPUS=4 ./train.sh Deraining/Options/Deraining_Restormer.yml
#
# The yml must have num_gpu equal to GPUS; batch_size_per_gpu is per process.

CONFIG=$1
GPUS=${GPUS:-$(nvidia-smi -L | wc -l)}
PORT=${PORT:-4321}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export OMP_NUM_THREADS=1

python -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT basicsr/train.py -opt $CONFIG --launcher pytorch
