#!/bin/bash
# sh scripts/basics/cifar10/train_oe_multigpu.sh
#
# Outlier Exposure on CIFAR-10 with TinyImages-300K as auxiliary outliers,
# 4 GPUs on one node via OpenOOD's launch() (mp.spawn + NCCL).

export CUDA_VISIBLE_DEVICES=0,1,2,3
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN
# our 4x2080Ti box has no NVLink and P2P over PCIe hangs on this board
export NCCL_P2P_DISABLE=1
export NCCL_IB_DISABLE=1

NUM_GPUS=4
SEED=${SEED:-0}

PYTHONPATH='.':$PYTHONPATH \
python main.py \
    --config configs/datasets/cifar10/cifar10.yml \
    configs/datasets/cifar10/cifar10_oe.yml \
    configs/networks/resnet18_32x32.yml \
    configs/pipelines/train/train_oe.yml \
    configs/preprocessors/base_preprocessor.yml \
    --num_gpus ${NUM_GPUS} \
    --num_workers 8 \
    --dataset.train.batch_size 32 \
    --dataset.oe.batch_size 64 \
    --optimizer.num_epochs 100 \
    --optimizer.lr 0.1 \
    --seed ${SEED}

# evaluate the last checkpoint on a single card
CUDA_VISIBLE_DEVICES=0 PYTHONPATH='.':$PYTHONPATH \
python scripts/eval_ood.py \
    --id-data cifar10 \
    --root ./results/cifar10_oe_resnet18_32x32_oe_e100_lr0.1_default \
    --postprocessor msp \
    --save-score --save-csv
