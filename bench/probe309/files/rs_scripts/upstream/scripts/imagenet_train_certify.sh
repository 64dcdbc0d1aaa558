#!/usr/bin/env bash
# Train ImageNet base classifiers with Gaussian augmentation on one 8-GPU node,
# then certify the smoothed classifiers on every 100th validation image.
#
#   bash scripts/imagenet_train_certify.sh 0.50
#
set -euo pipefail

SIGMA=${1:-0.50}
OUT=models/imagenet/resnet50/noise_${SIGMA}
export IMAGENET_DIR=${IMAGENET_DIR:-/data/imagenet}

# ----------------------------------------------------------------------------
# Multi-GPU training (DDP, one process per GPU)
# ----------------------------------------------------------------------------
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
NGPUS=$(nvidia-smi --list-gpus | wc -l)
export OMP_NUM_THREADS=8
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=1
export NCCL_P2P_LEVEL=NVL

mkdir -p ${OUT}
torchrun --standalone --nproc_per_node=${NGPUS} code/train_imagenet_ddp.py resnet50 ${OUT} \
    --noise_sd ${SIGMA} --batch 64 --lr 0.1 --epochs 90 --amp --channels_last \
    2>&1 | tee ${OUT}/train.out

# ----------------------------------------------------------------------------
# Certification: 8 shards in parallel, one per GPU
# ----------------------------------------------------------------------------
mkdir -p data/certify/imagenet/resnet50/noise_${SIGMA}
for GPU in 0 1 2 3 4 5 6 7; do
    CUDA_VISIBLE_DEVICES=${GPU} python code/certify.py imagenet ${OUT}/checkpoint.pth.tar ${SIGMA} \
        data/certify/imagenet/resnet50/noise_${SIGMA}/test_shard${GPU} \
        --skip 100 --batch 400 --N 100000 --gpu_counts \
        > data/certify/imagenet/resnet50/noise_${SIGMA}/log_shard${GPU}.txt 2>&1 &
done
wait

cat data/certify/imagenet/resnet50/noise_${SIGMA}/test_shard* | sort -n -k1 | uniq \
    > data/certify/imagenet/resnet50/noise_${SIGMA}/test
python code/analyze.py data/certify/imagenet/resnet50/noise_${SIGMA}/test
