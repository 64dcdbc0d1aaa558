#!/bin/bash
# Usage: sh train_torch.sh <num_gpus> <gpu_ids>
#   e.g. sh train_torch.sh 8 0,1,2,3,4,5,6,7
export PYTHONPATH=../../:$PYTHONPATH

# NCCL tuning for the 8xV100 nodes (no InfiniBand between the two racks)
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0
export OMP_NUM_THREADS=1

CUDA_VISIBLE_DEVICES=$2 python -m torch.distributed.launch --nproc_per_node=$1 --master_port=11111 ../../tools/train_val.py
