#!/usr/bin/env bash
# Export a trained anomalib model to ONNX and build TensorRT engines for the line PCs.
#
#   bash tools/export_trt.sh efficient_ad bottle [fp16|fp32]
#
# Requires TensorRT 8.6 (trtexec on PATH) and a CUDA 11.8 driver.
set -euo pipefail

MODEL=${1:-efficient_ad}
CATEGORY=${2:-bottle}
PRECISION=${3:-fp16}
GPU_ID=${GPU_ID:-0}
RESULTS=results/${MODEL}/mvtec/${CATEGORY}/run
WEIGHTS=${RESULTS}/weights
IMAGE_SIZE=256

export CUDA_VISIBLE_DEVICES=${GPU_ID}

echo "[export] ${MODEL}/${CATEGORY} -> ONNX"
python tools/export.py \
    --model_config_path src/anomalib/models/${MODEL}/config.yaml \
    --weight_file ${WEIGHTS}/lightning/model.ckpt \
    --export_mode onnx \
    --half_precision $([ "${PRECISION}" = "fp16" ] && echo true || echo false)

ONNX=${WEIGHTS}/onnx/model.onnx
ENGINE=${WEIGHTS}/onnx/model_${PRECISION}.engine

if ! command -v trtexec >/dev/null 2>&1; then
    export PATH=/usr/src/tensorrt/bin:${PATH}
fi

echo "[export] building TensorRT engine (${PRECISION})"
TRT_FLAGS="--workspace=4096 --minShapes=input:1x3x${IMAGE_SIZE}x${IMAGE_SIZE} --optShapes=input:1x3x${IMAGE_SIZE}x${IMAGE_SIZE} --maxShapes=input:8x3x${IMAGE_SIZE}x${IMAGE_SIZE}"
if [ "${PRECISION}" = "fp16" ]; then
    TRT_FLAGS="${TRT_FLAGS} --fp16"
fi
trtexec --onnx=${ONNX} --saveEngine=${ENGINE} ${TRT_FLAGS} | tee ${WEIGHTS}/onnx/trtexec_${PRECISION}.log

cp ${WEIGHTS}/onnx/metadata.json ${WEIGHTS}/onnx/metadata_${PRECISION}.json

echo "[export] sanity check on the test split"
python tools/inference/trt_inference.py \
    --engine ${ENGINE} \
    --metadata ${WEIGHTS}/onnx/metadata.json \
    --input datasets/MVTec/${CATEGORY}/test \
    --output ${RESULTS}/trt_vis_${PRECISION}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee ${WEIGHTS}/onnx/gpu_${PRECISION}.txt
echo "[export] done: ${ENGINE}"
