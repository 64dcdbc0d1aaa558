#!/bin/bash
# APN (NeurIPS'20) -- CUB, generalized zero-shot setting.
# Needs ~11GB of GPU memory with batch size 64 (tested on a single 1080Ti / V100).
# The training id is used to name the checkpoint in ./out/

cd "$(dirname "$0")/.." || exit 1
mkdir -p out

python ./model/main.py --calibrated_stacking 0.7 --dataset CUB --cuda --nepoch 30 --batch_size 64 \
  --train_id 0 --manualSeed 3131 --pretrain_epoch 4 --pretrain_lr 1e-4 --classifier_lr 1e-6 \
  --xe 1 --attri 1e-4 --regular 5e-6 --l_xe 0 --l_attri 1e-2 --l_regular 4e-2 --cpt 1e-9 \
  --gzsl --gpu 0 \
  --resnet_path ./pretrained_models/resnet101_c.pth.tar \
  --image_root ./data/ --root ./
