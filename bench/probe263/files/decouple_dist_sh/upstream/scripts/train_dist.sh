#!/usr/bin/env bash
# Two-stage decoupled training on ImageNet-LT / iNaturalist18 / Places-LT.
#
#   stage 1: joint (instance-balanced) representation learning
#   stage 2: cRT  - re-train the classifier with class-balanced sampling
#            LWS  - learn per-class weight scales
#            tau  - post-hoc tau-normalisation (no training, see tools/tau_norm_eval.py)
#
# Usage: bash scripts/train_dist.sh <dataset> <arch> [num_gpus] [gpu_ids]
#   bash scripts/train_dist.sh ImageNet_LT resnext50 8
#   bash scripts/train_dist.sh iNaturalist18 resnet50 4 4,5,6,7

set -e

DATASET=${1:-ImageNet_LT}
ARCH=${2:-resnext50}
NGPUS=${3:-8}
GPU_IDS=${4:-0,1,2,3,4,5,6,7}
PORT=${PORT:-29500}

export CUDA_VISIBLE_DEVICES=${GPU_IDS}
export OMP_NUM_THREADS=4
export NCCL_DEBUG=WARN
export NCCL_IB_DISABLE=1

STAGE1_CFG=./config/${DATASET}/feat_uniform.yaml
CRT_CFG=./config/${DATASET}/cls_crt.yaml
LWS_CFG=./config/${DATASET}/cls_lws.yaml

LOG_ROOT=./logs/${DATASET}/models
mkdir -p ${LOG_ROOT}

nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

echo "==> [1/3] stage-1 joint training (${ARCH}, ${NGPUS} GPUs)"
python -m torch.distributed.launch --nproc_per_node=${NGPUS} --master_port=${PORT} \
    main.py --cfg ${STAGE1_CFG} --seed 0 --dist_backend nccl \
    2>&1 | tee ${LOG_ROOT}/stage1_${ARCH}.log

echo "==> [2/3] classifier re-training (cRT)"
python -m torch.distributed.launch --nproc_per_node=${NGPUS} --master_port=$((PORT + 1)) \
    main.py --cfg ${CRT_CFG} --seed 0 --dist_backend nccl \
    2>&1 | tee ${LOG_ROOT}/crt_${ARCH}.log

echo "==> [3/3] learnable weight scaling (LWS)"
python -m torch.distributed.launch --nproc_per_node=${NGPUS} --master_port=$((PORT + 2)) \
    main.py --cfg ${LWS_CFG} --seed 0 --dist_backend nccl \
    2>&1 | tee ${LOG_ROOT}/lws_${ARCH}.log

# Evaluation and feature dump run on a single GPU
FIRST_GPU=${GPU_IDS%%,*}
CUDA_VISIBLE_DEVICES=${FIRST_GPU} python main.py --cfg ${CRT_CFG} --test \
    --model_dir ${LOG_ROOT}/crt_${ARCH}/final_model_checkpoint.pth
CUDA_VISIBLE_DEVICES=${FIRST_GPU} python main.py --cfg ${STAGE1_CFG} --test --save_feat val \
    --model_dir ${LOG_ROOT}/feat_uniform_${ARCH}/final_model_checkpoint.pth

python tools/tau_norm_eval.py --cfg ${STAGE1_CFG} \
    --ckpt ${LOG_ROOT}/feat_uniform_${ARCH}/final_model_checkpoint.pth \
    --feats ${LOG_ROOT}/feat_uniform_${ARCH}/valfeat_all.pkl --gpu ${FIRST_GPU}
