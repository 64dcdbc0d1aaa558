#!/usr/bin/env bash
# Usage: ./scripts/train_smpl.sh <exp_id> <config> [port]
# e.g.   ./scripts/train_smpl.sh train_res34 ./configs/256x192_adam_lr1e-3-res34_smpl_3d_cam_2x_mix.yaml
set -x

EXPID=$1
CONFIG=$2
PORT=${3:-23456}

HOST=$(hostname -i)

# 8 x V100 32GB, one process per GPU (mp.spawn inside train_smpl.py)
export CUDA_VISIBLE_DEVICES=${GPUS:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4

mkdir -p ./exp/logs

python ./scripts/train_smpl.py \
    --nThreads 32 \
    --launcher pytorch --rank 0 \
    --dist-backend nccl \
    --dist-url tcp://${HOST}:${PORT} \
    --exp-id ${EXPID} \
    --cfg ${CONFIG} --seed 123123 \
    2>&1 | tee ./exp/logs/${EXPID}.log
