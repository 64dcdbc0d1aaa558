#!/bin/bash
# sh scripts/basics/imagenet200/train_imagenet200.sh

# GPU=2
# CPU=1
# node=73
# jobname=openood
#
# PYTHONPATH='.':$PYTHONPATH \
# srun -p dsta --mpi=pmi2 --gres=gpu:${GPU} -n1 \
# --cpus-per-task=${CPU} --ntasks-per-node=${GPU} \
# --kill-on-bad-exit=1 --job-name=${jobname} -w SG-IDC1-10-51-2-${node} \

# ImageNet-200 baseline is trained on 2 GPUs with the detectron2-style
# launcher (mp.spawn + NCCL); num_gpus must match the visible devices.
SEED=${SEED:-0}

export CUDA_VISIBLE_DEVICES=0,1
PYTHONPATH='.':$PYTHONPATH \
python main.py \
    --config configs/datasets/imagenet200/imagenet200.yml \
    configs/networks/resnet18_224x224.yml \
    configs/pipelines/train/baseline.yml \
    configs/preprocessors/base_preprocessor.yml \
    --dataset.train.batch_size 128 \
    --num_gpus 2 --num_workers 16 \
    --optimizer.num_epochs 90 \
    --optimizer.lr 0.1 \
    --seed ${SEED}
