#!/bin/bash
# Multiscale FFJORD on CIFAR-10 (bits/dim ~3.40 after ~500 epochs on 4 GPUs).
# DataParallel splits the batch over every visible GPU, so the effective
# per-GPU batch is BATCH_SIZE / number of GPUs listed below.

export CUDA_VISIBLE_DEVICES=0,1,2,3

DATA=cifar10
SAVE=experiments/cnf/${DATA}_multiscale
BATCH_SIZE=900
TEST_BATCH_SIZE=500

mkdir -p ${SAVE}

python train_cnf.py \
    --data ${DATA} \
    --dims 64,64,64 \
    --strides 1,1,1,1 \
    --num_blocks 2 \
    --layer_type concat \
    --multiscale True \
    --rademacher True \
    --batch_size ${BATCH_SIZE} \
    --test_batch_size ${TEST_BATCH_SIZE} \
    --save ${SAVE} \
    2>&1 | tee ${SAVE}/train.log

# Single-GPU MNIST run used for the ablation table:
# CUDA_VISIBLE_DEVICES=0 python train_cnf.py --data mnist --dims 64,64,64 --strides 1,1,1,1 \
#     --num_blocks 2 --layer_type concat --multiscale True --rademacher True

# Evaluate the best checkpoint on the test set
CUDA_VISIBLE_DEVICES=0 python eval_cnf.py \
    --data ${DATA} \
    --resume ${SAVE}/checkpt.pth \
    --test_batch_size ${TEST_BATCH_SIZE}
