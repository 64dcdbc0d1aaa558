#!/bin/bash
#SBATCH --job-name=paco_r50_imagenetlt
#SBATCH --nodes=1
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=64
#SBATCH --time=72:00:00
#SBATCH --output=logs/%x-%j.out

# PaCo, ResNet-50, ImageNet-LT, 400 epochs, 8 x V100 (32G).
# Multi-node: set NODE_RANK / WORLD_SIZE / MASTER_ADDR and run the same script on every node.

export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_DEBUG=INFO
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

MASTER_ADDR=${MASTER_ADDR:-localhost}
MASTER_PORT=${MASTER_PORT:-10034}
WORLD_SIZE=${WORLD_SIZE:-1}
NODE_RANK=${NODE_RANK:-0}

data=/mnt/proj75/jqcui/Data/ImageNet2012
mark=R50_mark
mkdir -p logs

python paco_lt.py \
  --dataset imagenet \
  --arch resnet50 \
  --data ${data} \
  --alpha 0.05 \
  --beta 1.0 \
  --gamma 1.0 \
  --wd 5e-4 \
  --mark ${mark} \
  --lr 0.02 \
  --moco-t 0.2 \
  --aug randcls_sim \
  --randaug_m 10 \
  --randaug_n 2 \
  --dist-url "tcp://${MASTER_ADDR}:${MASTER_PORT}" \
  --multiprocessing-distributed \
  --world-size ${WORLD_SIZE} \
  --rank ${NODE_RANK} \
  --epochs 400 \
  --fp16
