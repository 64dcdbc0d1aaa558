#!/usr/bin/env bash
# SGCls with MotifPredictor (TDE-ready) on 2 GPUs.
# Usage: bash scripts/train_motifs_sgcls.sh [GPU_IDS] [PORT]
#   GPU_IDS defaults to "0,1"; PORT must differ between concurrent jobs on one machine.
set -e

GPU_IDS=${1:-"0,1"}
PORT=${2:-10025}
export CUDA_VISIBLE_DEVICES=${GPU_IDS}
export NUM_GPUS=$(echo ${GPU_IDS} | tr ',' '\n' | wc -l)
export OMP_NUM_THREADS=4

MODEL_NAME=motif-sgcls-exmp
GLOVE_DIR=${GLOVE_DIR:-./datasets/glove}
DETECTOR=${DETECTOR:-./checkpoints/pretrained_faster_rcnn/model_final.pth}

mkdir -p ./checkpoints/${MODEL_NAME}
echo "training ${MODEL_NAME} on GPUs ${CUDA_VISIBLE_DEVICES} (${NUM_GPUS} procs)"

python -m torch.distributed.launch --master_port ${PORT} --nproc_per_node=${NUM_GPUS} \
    tools/relation_train_net.py \
    --config-file "configs/e2e_relation_X_101_32_8_FPN_1x.yaml" \
    MODEL.ROI_RELATION_HEAD.USE_GT_BOX True \
    MODEL.ROI_RELATION_HEAD.USE_GT_OBJECT_LABEL False \
    MODEL.ROI_RELATION_HEAD.PREDICTOR MotifPredictor \
    SOLVER.IMS_PER_BATCH 12 TEST.IMS_PER_BATCH ${NUM_GPUS} DTYPE "float16" \
    SOLVER.MAX_ITER 50000 SOLVER.VAL_PERIOD 2000 SOLVER.CHECKPOINT_PERIOD 2000 \
    GLOVE_DIR ${GLOVE_DIR} \
    MODEL.PRETRAINED_DETECTOR_CKPT ${DETECTOR} \
    OUTPUT_DIR ./checkpoints/${MODEL_NAME} 2>&1 | tee ./checkpoints/${MODEL_NAME}/train.log
