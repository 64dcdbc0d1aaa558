#!/usr/bin/env bash
# Build the HR-VITON / VITON-HD style inputs for custom images:
#   image-densepose/   (detectron2 DensePose, R50-FPN s1x)
#   image-parse-v3/    (SCHP, LIP checkpoint)
#   openpose_img/ openpose_json/  (OpenPose body_25, built with CUDA in ./openpose)
set -euo pipefail

GPU=${GPU:-0}
ROOT=${1:-./data/custom/test}
DETECTRON2_DIR=${DETECTRON2_DIR:-./detectron2}
SCHP_DIR=${SCHP_DIR:-./Self-Correction-Human-Parsing}

export CUDA_VISIBLE_DEVICES=$GPU

echo "[1/3] DensePose -> $ROOT/image-densepose"
python3 $DETECTRON2_DIR/projects/DensePose/apply_net.py show \
    $DETECTRON2_DIR/projects/DensePose/configs/densepose_rcnn_R_50_FPN_s1x.yaml \
    https://dl.fbaipublicfiles.com/densepose/densepose_rcnn_R_50_FPN_s1x/165712039/model_final_162be9.pkl \
    $ROOT/image dp_segm -v \
    --output $ROOT/image-densepose/output.png \
    --opts MODEL.DEVICE cuda

echo "[2/3] SCHP human parsing -> $ROOT/image-parse-v3"
python3 $SCHP_DIR/simple_extractor.py \
    --dataset lip \
    --gpu $GPU \
    --model-restore $SCHP_DIR/checkpoints/exp-schp-201908261155-lip.pth \
    --input-dir $ROOT/image \
    --output-dir $ROOT/image-parse-v3

echo "[3/3] OpenPose -> $ROOT/openpose_img, $ROOT/openpose_json"
# OpenPose is a CUDA/cuDNN C++ build; --num_gpu selects how many GPUs it spreads over
./openpose/build/examples/openpose/openpose.bin \
    --image_dir $ROOT/image \
    --hand --disable_blending --display 0 \
    --num_gpu 1 --num_gpu_start $GPU \
    --write_json $ROOT/openpose_json \
    --write_images $ROOT/openpose_img

echo "done."
