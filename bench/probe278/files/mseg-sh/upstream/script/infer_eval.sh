#!/bin/bash
# Inference + evaluation for range-image MOS on SemanticKITTI (seq 08 for validation)

DatasetPath=/path/to/kitti/dataset
ModelPath=./log/Train/SalsaNextWithMotionAttention
SavePath=./log/Valid/predictions
SPLIT=valid          # valid or test

# pick a free GPU
export CUDA_VISIBLE_DEVICES=0

python3 infer.py -d $DatasetPath -m $ModelPath -l $SavePath -s $SPLIT

# evaluation does not need a GPU
python3 utils/evaluate_mos.py -d $DatasetPath -p $SavePath --split $SPLIT

# optional: 3D KNN refinement pass on the saved range predictions
CUDA_VISIBLE_DEVICES=1 python3 utils/knn_refine.py -d $DatasetPath -p $SavePath --split $SPLIT
