#!/bin/bash
# CLIMS on PASCAL VOC 2012: train CLIMS, generate CAMs, then refine them with IRN.
# Tested with a single RTX 3090 (24GB); make_cam spawns one process per visible GPU.

VOC12_ROOT=${VOC12_ROOT:-/data/VOCdevkit/VOC2012}
GPU=${GPU:-0}

# 1. train CLIMS + make CAMs + evaluate CAMs + convert to IR labels
CUDA_VISIBLE_DEVICES=$GPU python run_sample.py --voc12_root $VOC12_ROOT \
    --hyper 10,24,1,0.2 --clims_num_epoches 15 --cam_eval_thres 0.15 \
    --work_space clims_voc12 --cam_network net.resnet50_clims --train_clims_pass True \
    --make_clims_pass True --eval_cam_pass True --clip ViT-B/32

# 2. train IRN and produce the final pseudo labels
CUDA_VISIBLE_DEVICES=$GPU python run_sample.py --work_space clims_voc12 --voc12_root $VOC12_ROOT \
    --cam_eval_thres 0.15 --cam_network net.resnet50_clims \
    --cam_to_ir_label_pass True --train_irn_pass True --make_sem_seg_pass True --eval_sem_seg_pass True

echo "done. pseudo labels in clims_voc12/sem_seg"
