#!/bin/bash
# Reproduce the f-CLSWGAN numbers reported in the paper (CVPR 2018).
# Usage: bash scripts/reproduce.sh <GPU_ID> [CUB|FLO|SUN|AWA1]
# All runs use the 2048-d ResNet-101 features from the proposed splits (xlsa17).

GPU=${1:-0}
DATASET=${2:-CUB}
DATAROOT=${DATAROOT:-./data}
LOGDIR=./logs
mkdir -p ${LOGDIR}

export CUDA_VISIBLE_DEVICES=${GPU}
echo "Running f-CLSWGAN on ${DATASET} (GPU ${GPU})"

case ${DATASET} in
  CUB)
    # CUB: 312-d attributes (use --class_embedding sent for the 1024-d char-CNN-RNN embeddings)
    python clswgan.py --manualSeed 3483 --cls_weight 0.01 --preprocessing --val_every 1 \
      --lr 0.0001 --image_embedding res101 --class_embedding att --netG_name MLP_G \
      --netD_name MLP_CRITIC --nepoch 56 --syn_num 300 --ngh 4096 --ndh 4096 --lambda1 10 \
      --critic_iter 5 --dataset CUB --batch_size 64 --nz 312 --attSize 312 --resSize 2048 \
      --outname cub --dataroot ${DATAROOT} --cuda 2>&1 | tee ${LOGDIR}/cub_zsl.log
    python clswgan.py --gzsl --manualSeed 3483 --cls_weight 0.01 --preprocessing --val_every 1 \
      --lr 0.0001 --image_embedding res101 --class_embedding att --netG_name MLP_G \
      --netD_name MLP_CRITIC --nepoch 56 --syn_num 300 --ngh 4096 --ndh 4096 --lambda1 10 \
      --critic_iter 5 --dataset CUB --batch_size 64 --nz 312 --attSize 312 --resSize 2048 \
      --outname cub --dataroot ${DATAROOT} --cuda 2>&1 | tee ${LOGDIR}/cub_gzsl.log
    ;;
  FLO)
    python clswgan.py --gzsl --manualSeed 806 --cls_weight 0.1 --preprocessing --val_every 1 \
      --lr 0.0001 --image_embedding res101 --class_embedding att --netG_name MLP_G \
      --netD_name MLP_CRITIC --nepoch 80 --syn_num 300 --ngh 4096 --ndh 4096 --lambda1 10 \
      --critic_iter 5 --dataset FLO --batch_size 64 --nz 1024 --attSize 1024 --resSize 2048 \
      --outname flowers --dataroot ${DATAROOT} --cuda 2>&1 | tee ${LOGDIR}/flo_gzsl.log
    ;;
  SUN)
    python clswgan.py --gzsl --manualSeed 4115 --cls_weight 0.01 --preprocessing --val_every 1 \
      --lr 0.0002 --image_embedding res101 --class_embedding att --netG_name MLP_G \
      --netD_name MLP_CRITIC --nepoch 40 --syn_num 400 --ngh 4096 --ndh 4096 --lambda1 10 \
      --critic_iter 5 --dataset SUN --batch_size 64 --nz 102 --attSize 102 --resSize 2048 \
      --outname sun --dataroot ${DATAROOT} --cuda 2>&1 | tee ${LOGDIR}/sun_gzsl.log
    ;;
  AWA1)
    python clswgan.py --gzsl --manualSeed 9182 --cls_weight 0.01 --preprocessing --val_every 1 \
      --lr 0.00001 --image_embedding res101 --class_embedding att --netG_name MLP_G \
      --netD_name MLP_CRITIC --nepoch 30 --syn_num 1800 --ngh 4096 --ndh 4096 --lambda1 10 \
      --critic_iter 5 --dataset AWA1 --batch_size 64 --nz 85 --attSize 85 --resSize 2048 \
      --outname awa --dataroot ${DATAROOT} --cuda 2>&1 | tee ${LOGDIR}/awa1_gzsl.log
    ;;
  *)
    echo "unknown dataset ${DATASET}"; exit 1
    ;;
esac

nvidia-smi --query-gpu=name,memory.used --format=csv >> ${LOGDIR}/gpu_usage.txt
