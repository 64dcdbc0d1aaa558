#!/bin/bash
# 4-GPU DDP training of DCAMA (Swin-B backbone) on PASCAL-5i fold 0.
#   bash scripts/train.sh 0
FOLD=${1:-0}
BENCHMARK=${BENCHMARK:-pascal}
BACKBONE=${BACKBONE:-swin}

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=1

python -m torch.distributed.launch --nproc_per_node=4 --master_port=16005 \
    ./train.py --datapath "../datasets" \
               --benchmark ${BENCHMARK} \
               --fold ${FOLD} \
               --bsz 12 \
               --nworker 8 \
               --backbone ${BACKBONE} \
               --feature_extractor_path "../backbones/swin_base_patch4_window12_384.pth" \
               --logpath "./logs" \
               --lr 1e-3 \
               --nepoch 500 \
               --amp
