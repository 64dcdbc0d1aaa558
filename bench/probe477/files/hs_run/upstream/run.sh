#!/bin/bash
# Reproduce the main TIMIT experiments of "Hide and Speak".
# 1 message, 3 messages and the noisy-channel variant.

DATA=${DATA:-data/timit}

# single message
CUDA_VISIBLE_DEVICES=0 python main.py --dataset timit --data $DATA \
    --n_messages 1 --experiment timit_1msg --epochs 50 --batch_size 32

# three messages in one carrier (second GPU, can run next to the first job)
CUDA_VISIBLE_DEVICES=1 python main.py --dataset timit --data $DATA \
    --n_messages 3 --experiment timit_3msg --epochs 50 --batch_size 16

# robustness to additive gaussian noise, 2 GPUs
CUDA_VISIBLE_DEVICES=0,1 python main.py --dataset timit --data $DATA \
    --n_messages 1 --noise 0.01 --experiment timit_1msg_noise --gpus 0,1 --batch_size 64

# evaluate the best checkpoint
python main.py --dataset timit --data $DATA --n_messages 1 --mode test \
    --load_ckpt runs/timit_1msg/ckpt/best.ckpt --experiment timit_1msg
