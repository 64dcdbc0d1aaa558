#!/bin/bash
# Certify the noise-trained CIFAR-10 ResNet-110 base classifiers (one sigma per GPU).
# Usage: bash scripts/certify_cifar10.sh models/cifar10/resnet110 data/certify/cifar10
#
# N=100,000 Monte Carlo samples per example, every 20th test image (500 images in total).
# On a single V100 one sigma takes roughly 15 hours.

MODELS=${1:-models/cifar10/resnet110}
OUT=${2:-data/certify/cifar10/resnet110}
mkdir -p ${OUT}/noise_0.12 ${OUT}/noise_0.25 ${OUT}/noise_0.50 ${OUT}/noise_1.00

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

cd code

CUDA_VISIBLE_DEVICES=0 python certify.py cifar10 ../${MODELS}/noise_0.12/checkpoint.pth.tar 0.12 \
    ../${OUT}/noise_0.12/test/sigma_0.12 --skip 20 --batch 400 &
CUDA_VISIBLE_DEVICES=1 python certify.py cifar10 ../${MODELS}/noise_0.25/checkpoint.pth.tar 0.25 \
    ../${OUT}/noise_0.25/test/sigma_0.25 --skip 20 --batch 400 &
CUDA_VISIBLE_DEVICES=2 python certify.py cifar10 ../${MODELS}/noise_0.50/checkpoint.pth.tar 0.50 \
    ../${OUT}/noise_0.50/test/sigma_0.50 --skip 20 --batch 400 &
CUDA_VISIBLE_DEVICES=3 python certify.py cifar10 ../${MODELS}/noise_1.00/checkpoint.pth.tar 1.00 \
    ../${OUT}/noise_1.00/test/sigma_1.00 --skip 20 --batch 400 &

wait
echo "done: results in ${OUT}"
