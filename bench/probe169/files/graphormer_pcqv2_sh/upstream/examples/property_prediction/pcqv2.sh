#!/usr/bin/env bash
# Copyright (c) Microsoft Corporation.
# Licensed under the MIT License.
#
# Graphormer-base on PCQM4Mv2 (OGB-LSC). 4 x V100 32GB, ~2 days.
# Effective batch = 4 GPUs x 256 graphs.

set -e

n_gpu=4
epoch=300
max_epoch=$((epoch + 1))
batch_size=256
tot_updates=$((3378606*epoch/batch_size/n_gpu))
warmup_updates=$((tot_updates/10))
save_dir=./ckpts/pcqv2-graphormer-base

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

mkdir -p ${save_dir}

fairseq-train \
    --user-dir ../../graphormer \
    --num-workers 16 \
    --ddp-backend=legacy_ddp \
    --dataset-name pcqm4mv2 \
    --dataset-source ogb \
    --task graph_prediction \
    --criterion l1_loss \
    --arch graphormer_base \
    --num-classes 1 \
    --attention-dropout 0.1 --act-dropout 0.1 --dropout 0.0 \
    --optimizer adam --adam-betas '(0.9, 0.999)' --adam-eps 1e-8 --clip-norm 5.0 --weight-decay 0.0 \
    --lr-scheduler polynomial_decay --power 1 --warmup-updates ${warmup_updates} --total-num-update ${tot_updates} \
    --lr 2e-4 --end-learning-rate 1e-9 \
    --batch-size ${batch_size} \
    --fp16 \
    --data-buffer-size 20 \
    --encoder-layers 12 \
    --encoder-embed-dim 768 \
    --encoder-ffn-embed-dim 768 \
    --encoder-attention-heads 32 \
    --max-epoch ${max_epoch} \
    --save-dir ${save_dir} \
    --tensorboard-logdir ${save_dir}/tsb \
    --log-format simple --log-interval 100 \
    --distributed-world-size ${n_gpu} \
    2>&1 | tee ${save_dir}/train.log
