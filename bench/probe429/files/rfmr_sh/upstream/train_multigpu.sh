#!/usr/bin/env bash
# Multi-GPU training of Retinexformer (4 x 3090 in the paper setting).
# usage: bash train_multigpu.sh Options/RetinexFormer_NTIRE_8x2000.yml

export CUDA_VISIBLE_DEVICES=0,1,2,3
NGPU=4
PORT=${PORT:-4321}
CONFIG=${1:-Options/RetinexFormer_NTIRE_8x2000.yml}

PYTHONPATH="$(dirname $0):${PYTHONPATH}" \
python -m torch.distributed.launch --nproc_per_node=$NGPU --master_port=$PORT \
    basicsr/train.py -opt $CONFIG --launcher pytorch
