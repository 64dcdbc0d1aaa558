#!/bin/bash
# sh scripts/ood/mds/imagenet_test_ood_mds.sh
#
# Usage: GPU_IDS=2 bash scripts/ood/mds/imagenet_test_ood_mds.sh [resnet50|vit-b-16]
# ImageNet MDS needs the whole train-set feature bank in host RAM (~10GB for
# resnet50); the class means / precision stay on the CPU.

set -e

ARCH=${1:-resnet50}
GPU_IDS=${GPU_IDS:-0}
NUM_WORKERS=${NUM_WORKERS:-16}

if [ "$ARCH" = "resnet50" ]; then
    NET_CFG=configs/networks/resnet50.yml
    CKPT=./results/pretrained_weights/resnet50_imagenet1k_v1.pth
else
    NET_CFG=configs/networks/vit.yml
    CKPT=./results/pretrained_weights/vit_b_16_imagenet1k.pth
fi

echo "[mds] arch=${ARCH} gpus=${GPU_IDS} workers=${NUM_WORKERS}"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

CUDA_VISIBLE_DEVICES=${GPU_IDS} PYTHONPATH='.':$PYTHONPATH \
python main.py \
    --config configs/datasets/imagenet/imagenet.yml \
    configs/datasets/imagenet/imagenet_ood.yml \
    ${NET_CFG} \
    configs/pipelines/test/test_ood.yml \
    configs/preprocessors/base_preprocessor.yml \
    configs/postprocessors/mds.yml \
    --num_workers ${NUM_WORKERS} \
    --num_gpus 1 \
    --ood_dataset.image_size 256 \
    --dataset.test.batch_size 256 \
    --dataset.val.batch_size 256 \
    --network.pretrained True \
    --network.checkpoint ${CKPT} \
    --merge_option merge

# full-spectrum variant (adds the covariate-shifted ID sets)
CUDA_VISIBLE_DEVICES=${GPU_IDS} python scripts/eval_ood_imagenet.py \
    --tvs-pretrained \
    --arch ${ARCH} \
    --postprocessor mds \
    --fsood \
    --save-score --save-csv
