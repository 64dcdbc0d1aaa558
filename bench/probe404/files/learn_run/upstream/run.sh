#!/usr/bin/env bash
# Train LEARN on 4 GPUs (one process per GPU, spawned from main.py).
# CTLIB must be built first:  cd ctlib && python setup.py install
set -e

export CUDA_VISIBLE_DEVICES=0,1,2,3
export OMP_NUM_THREADS=4

VIEWS=${VIEWS:-64}
DATA=${DATA:-./data/aapm_fan}
OUT=./checkpoints/learn_${VIEWS}views

mkdir -p ${OUT}
python main.py \
    --data_root ${DATA} \
    --save_dir ${OUT} \
    --views ${VIEWS} \
    --block_num 50 \
    --epochs 50 \
    --batch_size 1 \
    --lr 1e-4 \
    --dist_url tcp://127.0.0.1:23456 2>&1 | tee ${OUT}/train.log
