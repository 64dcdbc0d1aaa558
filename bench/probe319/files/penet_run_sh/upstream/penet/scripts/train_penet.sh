#!/usr/bin/env bash
# Three-stage training schedule of PENet on KITTI depth completion.
#   stage 1: ENet backbone (-n e)
#   stage 2: DA-CSPN++ with the backbone frozen (-n pe -f)
#   stage 3: end-to-end fine-tuning of the whole network (-n pe)
# Tested on 2x RTX 2080Ti (11GB); with a single GPU lower the batch size.
set -e

DATA_ROOT=${DATA_ROOT:-/data/dataset/kitti_depth/depth}
RGB_ROOT=${RGB_ROOT:-/data/dataset/kitti_raw}
GPUS=${GPUS:-"0,1"}
STAGE=${1:-1}

cd "$(dirname "$0")/.."

export OMP_NUM_THREADS=4

if [ "$STAGE" = "1" ]; then
    CUDA_VISIBLE_DEVICES=${GPUS} python main.py -b 6 -n e \
        --data-folder ${DATA_ROOT} --data-folder-rgb ${RGB_ROOT} \
        --epochs 30 --lr 1e-3 --workers 8
elif [ "$STAGE" = "2" ]; then
    CUDA_VISIBLE_DEVICES=${GPUS} python main.py -b 6 -f -n pe \
        --resume ../results/enet_best.pth.tar \
        --data-folder ${DATA_ROOT} --data-folder-rgb ${RGB_ROOT} \
        --epochs 50 --lr 1e-3 --workers 8
elif [ "$STAGE" = "3" ]; then
    CUDA_VISIBLE_DEVICES=${GPUS} python main.py -b 10 -n pe \
        --resume ../results/penet_frozen_best.pth.tar \
        --data-folder ${DATA_ROOT} --data-folder-rgb ${RGB_ROOT} \
        --epochs 75 --lr 1e-3 --workers 8 \
        -he 160 -w 576
elif [ "$STAGE" = "eval" ]; then
    # single GPU is enough for evaluation; report runtime of the accelerated PENet
    CUDA_VISIBLE_DEVICES=0 python main.py -b 1 -n pe --evaluate ../results/pe.pth.tar \
        --data-folder ${DATA_ROOT} --data-folder-rgb ${RGB_ROOT}
else
    echo "unknown stage: ${STAGE}" && exit 1
fi

nvidia-smi --query-gpu=index,name,memory.used --format=csv || true
