#!/bin/bash
# Reproduce the CIFAR-10 rows of Table 1 (MTT).
# Step 1 trains the expert trajectories, step 2 distills.
# Each step fits on a single 24GB GPU (RTX 3090 / A5000); ipc=50 needs --batch_syn to fit.
set -e

DATA=${DATA:-/data/datasets}
BUFFERS=${BUFFERS:-/data/buffers}
GPU=${GPU:-0}

export WANDB_MODE=${WANDB_MODE:-online}
export CUDA_VISIBLE_DEVICES=${GPU}

if [ "$1" == "buffer" ] || [ "$1" == "all" ]; then
    echo "==> training 100 ConvNet experts on CIFAR-10 (ZCA) on GPU ${GPU}"
    python buffer.py --dataset=CIFAR10 --model=ConvNet --train_epochs=50 --num_experts=100 \
        --zca --buffer_path=${BUFFERS} --data_path=${DATA}
fi

if [ "$1" == "distill" ] || [ "$1" == "all" ]; then
    echo "==> distilling CIFAR-10, ipc=1"
    python distill.py --dataset=CIFAR10 --ipc=1 --syn_steps=50 --expert_epochs=2 --max_start_epoch=2 \
        --zca --lr_img=1000 --lr_lr=1e-07 --lr_teacher=0.01 \
        --buffer_path=${BUFFERS} --data_path=${DATA}

    echo "==> distilling CIFAR-10, ipc=10"
    python distill.py --dataset=CIFAR10 --ipc=10 --syn_steps=30 --expert_epochs=2 --max_start_epoch=20 \
        --zca --lr_img=1000 --lr_lr=1e-05 --lr_teacher=0.01 \
        --buffer_path=${BUFFERS} --data_path=${DATA}

    echo "==> distilling CIFAR-10, ipc=50 (two GPUs: the student is wrapped in DataParallel)"
    CUDA_VISIBLE_DEVICES=0,1 python distill.py --dataset=CIFAR10 --ipc=50 --syn_steps=30 --expert_epochs=2 --max_start_epoch=40 \
        --lr_img=100 --lr_lr=1e-05 --lr_teacher=0.01 --batch_syn=256 \
        --buffer_path=${BUFFERS} --data_path=${DATA}
fi

if [ "$1" == "tiny" ]; then
    # Tiny ImageNet needs ~ 40GB for ipc=10 without --batch_syn (A100 / A6000)
    CUDA_VISIBLE_DEVICES=${GPU} python buffer.py --dataset=Tiny --model=ConvNetD4 --train_epochs=50 --num_experts=100 \
        --buffer_path=${BUFFERS} --data_path=${DATA}
    CUDA_VISIBLE_DEVICES=${GPU} python distill.py --dataset=Tiny --ipc=10 --syn_steps=20 --expert_epochs=2 --max_start_epoch=40 \
        --lr_img=10000 --lr_lr=1e-04 --lr_teacher=0.01 --model=ConvNetD4 \
        --buffer_path=${BUFFERS} --data_path=${DATA}
fi
