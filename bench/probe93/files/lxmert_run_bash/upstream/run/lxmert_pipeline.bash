#!/bin/bash
# LXMERT: pre-train on the 5 datasets, fine-tune on VQA, then predict test-dev.
#
#   bash run/lxmert_pipeline.bash <gpu ids, e.g. 0,1,2,3> <experiment name> [stage]
#
# Stages: pretrain | vqa | test | all (default).  Features are the 36-box
# bottom-up-attention (Caffe Faster R-CNN, VG) tsv files under data/.

GPUS=$1
name=$2
STAGE=${3:-all}

if [ -z "$GPUS" ] || [ -z "$name" ]; then
    echo "usage: $0 <gpus> <name> [stage]"
    exit 1
fi

NGPU=$(nvidia-smi -L | wc -l)
echo "visible devices on this node: ${NGPU}, using: ${GPUS}"

# Save logs and models under snap/; make backup.
output=snap/pretrain/$name
mkdir -p $output/src
cp -r src/* $output/src/
cp $0 $output/run.bash

if [ "$STAGE" = "pretrain" ] || [ "$STAGE" = "all" ]; then
    # Pre-training; --multiGPU wraps the model in DataParallel over all listed GPUs
    CUDA_VISIBLE_DEVICES=$GPUS PYTHONPATH=$PYTHONPATH:./src \
        python src/pretrain/lxmert_pretrain.py \
        --taskMaskLM --taskObjPredict --taskMatched --taskQA \
        --visualLosses obj,attr,feat \
        --wordMaskRate 0.15 --objMaskRate 0.15 \
        --train mscoco_train,mscoco_nominival,vgnococo --valid mscoco_minival \
        --llayers 9 --xlayers 5 --rlayers 5 \
        --fromScratch \
        --batchSize 256 --optim bert --lr 1e-4 --epochs 20 \
        --tqdm --output $output --multiGPU
fi

vqa_output=snap/vqa/$name
mkdir -p $vqa_output/src
cp -r src/* $vqa_output/src/

if [ "$STAGE" = "vqa" ] || [ "$STAGE" = "all" ]; then
    # VQA fine-tuning starts from the last pre-training epoch
    CUDA_VISIBLE_DEVICES=${GPUS%%,*} PYTHONPATH=$PYTHONPATH:./src \
        python src/tasks/vqa.py \
        --train train,nominival --valid minival  \
        --llayers 9 --xlayers 5 --rlayers 5 \
        --loadLXMERTQA $output/Epoch20 \
        --batchSize 32 --optim bert --lr 5e-5 --epochs 4 \
        --tqdm --output $vqa_output
fi

if [ "$STAGE" = "test" ] || [ "$STAGE" = "all" ]; then
    # test-dev predictions for the evaluation server
    CUDA_VISIBLE_DEVICES=${GPUS##*,} PYTHONPATH=$PYTHONPATH:./src \
        python src/tasks/vqa.py \
        --tiny --train train --valid "" \
        --llayers 9 --xlayers 5 --rlayers 5 \
        --tqdm --output $vqa_output/test \
        --load $vqa_output/BEST --test test --batchSize 950
fi

echo "finished stage(s): ${STAGE}"
