#!/bin/bash
# WebVision-mini (50 classes) with GJS, 4 GPUs on one node.
#
#   bash scripts/webvision_dist.sh            # all four GPUs
#   GPUS=0,1 NPROC=2 bash scripts/webvision_dist.sh
#
# Each run takes ~3.5 days on 4x V100-32GB.

GPUS=${GPUS:-0,1,2,3}
NPROC=${NPROC:-4}
PORT=${PORT:-29501}
CONFIG=${CONFIG:-configs/webvision/gjs.json}

export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1
export NCCL_SOCKET_IFNAME=eth0

cd "$(dirname "$0")/.."

CUDA_VISIBLE_DEVICES=${GPUS} python -m torch.distributed.launch \
    --nproc_per_node=${NPROC} \
    --master_port=${PORT} \
    --use_env \
    train.py --config ${CONFIG} --out results/webvision "$@"

# evaluate the best checkpoint on ILSVRC12 val (single GPU)
CUDA_VISIBLE_DEVICES=${GPUS%%,*} python eval_imagenet.py \
    --config ${CONFIG} \
    --checkpoint results/webvision/webvision_mini_gjs_irv2/model_best.pth.tar
