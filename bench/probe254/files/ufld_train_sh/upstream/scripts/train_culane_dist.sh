#!/usr/bin/env bash
# Multi-GPU training on CULane, then a single-GPU evaluation of the last epoch.
#
#   bash scripts/train_culane_dist.sh configs/culane.py ./log/culane_res18
#   NGPUS=8 CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 bash scripts/train_culane_dist.sh configs/culane.py ./log/r18_8g
set -eo pipefail

CONFIG=${1:-configs/culane.py}
LOG_PATH=${2:-./log/culane}
EPOCHS=${EPOCHS:-50}
LAST_CKPT=$(printf "ep%03d.pth" $((EPOCHS - 1)))

export NGPUS=${NGPUS:-4}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export OMP_NUM_THREADS=1
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
MASTER_PORT=${MASTER_PORT:-29501}

mkdir -p "$LOG_PATH"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv | tee "$LOG_PATH/gpus.csv"

python -m torch.distributed.launch --nproc_per_node=$NGPUS --master_port=$MASTER_PORT \
    train.py $CONFIG --log_path $LOG_PATH --epoch $EPOCHS 2>&1 | tee "$LOG_PATH/train.log"

# evaluate the last checkpoint on one card (the CULane evaluator itself is CPU only)
CUDA_VISIBLE_DEVICES=0 python test.py $CONFIG --test_model $LOG_PATH/$LAST_CKPT --test_work_dir ./tmp
