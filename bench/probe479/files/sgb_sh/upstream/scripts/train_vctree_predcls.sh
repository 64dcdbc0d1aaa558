#!/usr/bin/env bash
# VCTree, PredCls, TDE-ready checkpoint. 2 GPUs, 12 images per batch.
export CUDA_VISIBLE_DEVICES=0,1
export NUM_GUP=2
echo "TRAINING Predcls"
MODEL_NAME="vctree_predcls"
mkdir -p ./checkpoints/${MODEL_NAME}/

python -m torch.distributed.launch --master_port 10025 --nproc_per_node=$NUM_GUP \
    tools/relation_train_net.py \
    --config-file "configs/e2e_relation_X_101_32_8_FPN_1x.yaml" \
    MODEL.ROI_RELATION_HEAD.USE_GT_BOX True \
    MODEL.ROI_RELATION_HEAD.USE_GT_OBJECT_LABEL True \
    MODEL.ROI_RELATION_HEAD.PREDICTOR CausalAnalysisPredictor \
    MODEL.ROI_RELATION_HEAD.CAUSAL.EFFECT_TYPE none \
    MODEL.ROI_RELATION_HEAD.CAUSAL.FUSION_TYPE sum \
    MODEL.ROI_RELATION_HEAD.CAUSAL.CONTEXT_LAYER vctree \
    SOLVER.IMS_PER_BATCH 12 TEST.IMS_PER_BATCH $NUM_GUP \
    DTYPE "float16" SOLVER.MAX_ITER 50000 SOLVER.VAL_PERIOD 2000 \
    SOLVER.CHECKPOINT_PERIOD 2000 GLOVE_DIR ./datasets/vg/ \
    MODEL.PRETRAINED_DETECTOR_CKPT ./checkpoints/pretrained_faster_rcnn/model_final.pth \
    OUTPUT_DIR ./checkpoints/${MODEL_NAME} \
    TEST.RELATION.SYNC_GATHER True;
