#!/bin/bash
# Reproduce the torchvision reference recipes on one 8-GPU node.
#   DATA=/datasets01 bash references/run_recipes.sh [classification|detection|segmentation|video]
set -e

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
export OMP_NUM_THREADS=1
NGPU=8
DATA=${DATA:-/datasets01}
OUT=${OUT:-$(pwd)/runs}
WHAT=${1:-all}

cd "$(dirname "$0")"

if [[ $WHAT == all || $WHAT == classification ]]; then
    # ResNet-50 "new recipe": 80.858 Acc@1
    (cd classification && torchrun --nproc_per_node=$NGPU train.py --model resnet50 --batch-size 128 --lr 0.5 \
        --lr-scheduler cosineannealinglr --lr-warmup-epochs 5 --lr-warmup-method linear \
        --auto-augment ta_wide --epochs 600 --random-erase 0.1 --weight-decay 0.00002 \
        --norm-weight-decay 0.0 --label-smoothing 0.1 --mixup-alpha 0.2 --cutmix-alpha 1.0 \
        --train-crop-size 176 --model-ema --val-resize-size 232 --ra-sampler --ra-reps 4 --amp \
        --data-path $DATA/imagenet --output-dir $OUT/resnet50)
fi

if [[ $WHAT == all || $WHAT == detection ]]; then
    (cd detection && torchrun --nproc_per_node=$NGPU train.py --dataset coco --model fasterrcnn_resnet50_fpn \
        --epochs 26 --lr-steps 16 22 --aspect-ratio-group-factor 3 \
        --weights-backbone ResNet50_Weights.IMAGENET1K_V1 --data-path $DATA/COCO/022719 --output-dir $OUT/frcnn)
    (cd detection && torchrun --nproc_per_node=$NGPU train.py --dataset coco --model retinanet_resnet50_fpn \
        --epochs 26 --lr-steps 16 22 --aspect-ratio-group-factor 3 --lr 0.01 \
        --weights-backbone ResNet50_Weights.IMAGENET1K_V1 --data-path $DATA/COCO/022719 --output-dir $OUT/retinanet)
    # Mask R-CNN v2 with large-scale jitter + copy-paste
    (cd detection && torchrun --nproc_per_node=$NGPU train.py --dataset coco --model maskrcnn_resnet50_fpn_v2 \
        --epochs 400 --batch-size 2 --lr-scheduler cosineannealinglr --lr 0.02 --opt sgd \
        --weight-decay 4e-5 --norm-weight-decay 0.0 --data-augmentation lsj --use-copypaste --sync-bn --amp \
        --weights-backbone ResNet50_Weights.IMAGENET1K_V1 --data-path $DATA/COCO/022719 --output-dir $OUT/mrcnn_v2)
fi

if [[ $WHAT == all || $WHAT == segmentation ]]; then
    (cd segmentation && torchrun --nproc_per_node=$NGPU train.py --lr 0.02 --dataset coco -b 4 \
        --model deeplabv3_resnet50 --aux-loss --weights-backbone ResNet50_Weights.IMAGENET1K_V1 \
        --data-path $DATA/COCO/022719 --output-dir $OUT/deeplabv3)
fi

if [[ $WHAT == all || $WHAT == video ]]; then
    (cd video_classification && torchrun --nproc_per_node=$NGPU train.py --data-path $DATA/kinetics \
        --kinetics-version 400 --lr 0.08 --cache-dataset --sync-bn --amp --batch-size 12 --clip-len 16 \
        --clips-per-video 5 --video-backend pyav --output-dir $OUT/r2plus1d)
fi
