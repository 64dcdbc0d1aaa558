#!/usr/bin/env bash
# Evaluate a VCTree SGDet checkpoint on VG150 test (single GPU; SGDet eval needs SYNC_GATHER).
# Usage: GPU=3 bash scripts/test_vctree_sgdet.sh ./checkpoints/vctree-sgdet-exmp
export CUDA_VISIBLE_DEVICES=${GPU:-0}
export NUM_GPUS=1
CHECKPOINT_DIR=${1:-./checkpoints/vctree-sgdet-exmp}

python -m torch.distributed.launch --master_port 10027 --nproc_per_node=$NUM_GPUS \
    tools/relation_test_net.py \
    --config-file "${CHECKPOINT_DIR}/config.yml" \
    MODEL.ROI_RELATION_HEAD.USE_GT_BOX False \
    MODEL.ROI_RELATION_HEAD.USE_GT_OBJECT_LABEL False \
    MODEL.ROI_RELATION_HEAD.PREDICTOR VCTreePredictor \
    TEST.IMS_PER_BATCH 1 DTYPE "float16" \
    MODEL.DEVICE cuda \
    GLOVE_DIR ./datasets/glove \
    MODEL.PRETRAINED_DETECTOR_CKPT ${CHECKPOINT_DIR} \
    OUTPUT_DIR ${CHECKPOINT_DIR} \
    TEST.RELATION.SYNC_GATHER True
