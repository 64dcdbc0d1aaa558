#!/usr/bin/env bash
# Train SEAN on CelebAMask-HQ (19 semantic classes) at 256x256.
# The paper numbers were obtained with 8 V100 GPUs and batch size 32; on a
# smaller machine lower --batchSize and keep it divisible by the number of GPUs.

set -e

export CUDA_VISIBLE_DEVICES=4,5,6,7
NAME=${NAME:-CelebA-HQ_pretrained}
DATAROOT=${DATAROOT:-datasets/CelebA-HQ}

# the style encoder + ACE blocks need ~14 GB per GPU at batch 4/GPU
NGPUS=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
if [ "${NGPUS}" -lt 4 ]; then
    echo "This recipe expects 4 visible GPUs, found ${NGPUS}" >&2
    exit 1
fi

python train.py \
    --name "${NAME}" \
    --load_size 256 --crop_size 256 \
    --dataset_mode custom \
    --label_dir "${DATAROOT}/train/labels" \
    --image_dir "${DATAROOT}/train/images" \
    --label_nc 19 \
    --no_instance \
    --batchSize 16 \
    --gpu_ids 0,1,2,3 \
    --niter 50 --niter_decay 50 \
    --display_freq 1000 --print_freq 100 \
    "$@"

# quick visual check on the held-out split once training has finished
python test.py \
    --name "${NAME}" \
    --load_size 256 --crop_size 256 \
    --dataset_mode custom \
    --label_dir "${DATAROOT}/test/labels" \
    --image_dir "${DATAROOT}/test/images" \
    --label_nc 19 \
    --no_instance \
    --gpu_ids 0 \
    --batchSize 1 \
    --status test
