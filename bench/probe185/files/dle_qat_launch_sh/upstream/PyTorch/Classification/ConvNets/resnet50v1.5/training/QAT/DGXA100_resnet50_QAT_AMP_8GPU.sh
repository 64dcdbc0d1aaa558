#!/bin/bash
# Quantization-aware fine-tuning of a pretrained ResNet50 v1.5 on one DGX A100 (8 GPUs).
#
# usage: DGXA100_resnet50_QAT_AMP_8GPU.sh <workspace> <pretrained.pth.tar> [data_dir]
#
# The checkpoint written here can be exported with ../../../export_qat.py and
# turned into an INT8 TensorRT engine with trtexec --int8.

WORKSPACE=${1:-"./"}
PRETRAINED=${2:?"pass the fp32 checkpoint to start QAT from"}
DATA_DIR=${3:-"/imagenet"}
NGPUS=${NGPUS:-8}

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6,7}
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=0
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export OMP_NUM_THREADS=4

python -m torch.distributed.run --nproc_per_node ${NGPUS} ./quant_main.py ${DATA_DIR} \
    --data-backend dali-gpu \
    --raport-file raport.json \
    -j5 \
    --arch resnet50 \
    --lr 0.0005 \
    --momentum 0.875 \
    --weight-decay 3.0517578125e-05 \
    --workspace ${WORKSPACE} \
    -b 128 \
    --amp \
    --static-loss-scale 128 \
    --memory-format nhwc \
    --epochs 10 \
    --num-calib-batches 10 \
    --pretrained-from-file ${PRETRAINED}
