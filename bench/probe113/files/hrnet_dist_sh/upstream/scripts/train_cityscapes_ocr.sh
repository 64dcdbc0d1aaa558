#!/usr/bin/env bash
# Train HRNetV2-W48 + OCR on Cityscapes (train set), 4 x V100 32G.
# Usage: bash scripts/train_cityscapes_ocr.sh [config] [extra opts...]
set -x

PYTHON=${PYTHON:-"python"}
CONFIG=${1:-"experiments/cityscapes/seg_hrnet_ocr_w48_train_512x1024_sgd_lr1e-2_wd5e-4_bs_12_epoch484.yaml"}
GPUS=${GPUS:-4}
PORT=${PORT:-29511}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export NCCL_DEBUG=WARN
export NCCL_SOCKET_IFNAME=eth0
export NCCL_IB_DISABLE=1
export OMP_NUM_THREADS=4

LOG_DIR=log/cityscapes/$(basename ${CONFIG} .yaml)
mkdir -p ${LOG_DIR}

$PYTHON -m torch.distributed.launch \
    --nproc_per_node=${GPUS} \
    --master_port=${PORT} \
    tools/train.py \
    --cfg ${CONFIG} \
    ${@:2} 2>&1 | tee ${LOG_DIR}/train_$(date +%Y%m%d_%H%M%S).log

# single-scale evaluation of the final checkpoint on one GPU
CUDA_VISIBLE_DEVICES=0 $PYTHON tools/test.py \
    --cfg ${CONFIG} \
    TEST.MODEL_FILE output/cityscapes/$(basename ${CONFIG} .yaml)/best.pth \
    TEST.SCALE_LIST 1, \
    TEST.FLIP_TEST False
