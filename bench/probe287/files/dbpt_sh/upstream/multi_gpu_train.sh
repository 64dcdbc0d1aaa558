#!/usr/bin/env bash
# usage: bash multi_gpu_train.sh config/icdar2015_resnet18_FPN_DBhead_polyLR.yaml
# (cards 0-3 of the shared box are reserved for the PAN++ experiments)
CONFIG=${1:-config/icdar2015_resnet18_FPN_DBhead_polyLR.yaml}
NGPUS=${NGPUS:-4}

export NCCL_DEBUG=WARN
export NCCL_P2P_DISABLE=1
export OMP_NUM_THREADS=4

CUDA_VISIBLE_DEVICES=4,5,6,7 python3 -m torch.distributed.launch --nproc_per_node=${NGPUS} \
    tools/train.py --config_file "${CONFIG}"
