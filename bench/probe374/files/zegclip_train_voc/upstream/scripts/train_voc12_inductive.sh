#!/usr/bin/env bash
# Inductive zero-shot setting on PASCAL VOC 2012 (15 seen / 5 unseen classes).
# The first four cards of the node are reserved for another job, so train on the last four.
export CUDA_VISIBLE_DEVICES=4,5,6,7
export NCCL_P2P_DISABLE=0
export OMP_NUM_THREADS=4

CONFIG=configs/voc12/vpt_seg_zero_vit-b_512x512_20k_12_10.py
WORK_DIR=work_dirs/voc12_zero_vit-b_20k
NGPUS=4

mkdir -p ${WORK_DIR}
PORT=${PORT:-29511} bash dist_train.sh ${CONFIG} ${NGPUS} --work-dir=${WORK_DIR} \
    2>&1 | tee ${WORK_DIR}/train.log

# evaluate the last checkpoint on the seen + unseen classes
python test.py ${CONFIG} ${WORK_DIR}/iter_20000.pth --eval=mIoU
