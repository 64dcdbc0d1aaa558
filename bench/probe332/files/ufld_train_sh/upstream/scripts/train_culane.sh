#!/bin/bash
# Multi-GPU training of UFLDv2 (ResNet-18) on CULane.
# Usage: bash scripts/train_culane.sh [config] [log_path]
set -e

CONFIG=${1:-configs/culane_res18.py}
LOG_PATH=${2:-./logs/culane_res18}

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NGPUS=4
export OMP_NUM_THREADS=4 # you can change this value according to your number of cpu cores
# RTX 3090 boxes without NVLink hang in the first all_reduce without this
export NCCL_P2P_DISABLE=1

python -m torch.distributed.launch --nproc_per_node=$NGPUS --master_port=${PORT:-29511} \
    train.py $CONFIG --log_path $LOG_PATH
