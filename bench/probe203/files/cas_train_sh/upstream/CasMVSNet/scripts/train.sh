#!/usr/bin/env bash
# usage: bash scripts/train.sh 4 ./checkpoints/casmvsnet [extra args]
# tested on 4x V100 32G / 8x 2080Ti (batch_size 2 per GPU)
MVS_TRAINING="/mnt/B/MVS_GT/dtu_training/"

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1

LOG_DIR=$2
if [ ! -d $LOG_DIR ]; then
    mkdir -p $LOG_DIR
fi

NGPUS=$1
BATCH_SIZE=2
MASTER_PORT=${MASTER_PORT:-29501}

python -m torch.distributed.launch --nproc_per_node=$NGPUS --master_port=$MASTER_PORT train.py \
    --logdir $LOG_DIR --dataset=dtu_yao --batch_size=$BATCH_SIZE --trainpath=$MVS_TRAINING \
    --trainlist lists/dtu/train.txt --testlist lists/dtu/test.txt --numdepth=192 \
    --ndepths "48,32,8" --depth_inter_r "4,2,1" --dlossw "0.5,1.0,2.0" \
    --lr 0.001 --lrepochs "10,12,14:2" --pin_m ${@:3} | tee -a $LOG_DIR/log.txt
